//! Weights and a call's values as `.safetensors` bytes, the format of PyTorch's
//! `safetensors.torch.save_file`: a `state_dict` matched to the entry module's state by
//! name, a call's arguments by name, and a call's outputs written back.
//!
//! In: a file's bytes (the caller reads them: the CLI from disk, the page from a file
//! picker), with the model's [`StateTensor`]s or its input names; or the tensors a call
//! returned. Out: values for every state tensor, a call's `CallShapes` with its tensors'
//! values, or the bytes of an outputs file (`out0`, `out1`, … in the order of the
//! returned pytree's leaves, each in its dtype). Invariant: every parameter and buffer Tailor
//! takes is float32, and a call's tensor is float32, int64 (whole numbers within ±2^24, the
//! float32 carrier's exact range) or bool; any other is a [`WeightsError`] naming the
//! tensor, except BatchNorm's int64
//! `num_batches_tracked` (a count of training steps that eval mode never reads, a buffer
//! Tailor's BatchNorm lacks), which is accepted and ignored. Matching is all or nothing:
//! one error lists every missing, unexpected and mis-shaped key, as PyTorch's strict
//! `load_state_dict` does, and no value is set unless all match.

use crate::frontend::StateTensor;
use crate::graph::{DType, Tensor};
use crate::guard::{ArgValue, CallShapes};
use safetensors::{Dtype, SafeTensors, View};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why a weights, inputs or outputs file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WeightsError {
    /// The bytes are not a safetensors file.
    #[error("the {file} file is not a safetensors file: {reason}")]
    Format {
        /// `weights` or `inputs`.
        file: &'static str,
        /// What the safetensors reader found.
        reason: String,
    },
    /// A tensor whose dtype Tailor cannot take.
    #[error(
        "the {file} file's tensor '{name}' is {dtype}; Tailor's tensors are float32 (F32){}",
        arguments_hint(.file)
    )]
    Dtype {
        /// `weights` or `inputs`.
        file: &'static str,
        /// The tensor's key.
        name: String,
        /// Its dtype as safetensors names it (`F16`, `I64`).
        dtype: String,
    },
    /// Weights for an entry that is a function: it has no `state_dict`.
    #[error("'{entry}' is a function, not an nn.Module: it has no state_dict to load")]
    NotAModule {
        /// The entry's name.
        entry: String,
    },
    /// Weights given after a call: its capture holds the earlier values.
    #[error("weights are loaded before the first call, and '{entry}' has been called")]
    AfterCall {
        /// The entry's name.
        entry: String,
    },
    /// The file's keys or shapes do not match the module's state.
    #[error("{}", state_mismatch(.entry, .missing, .unexpected, .mismatched))]
    StateDict {
        /// The entry's name.
        entry: String,
        /// The module's keys the file lacks, in `state_dict` order.
        missing: Vec<String>,
        /// The file's keys the module lacks, sorted.
        unexpected: Vec<String>,
        /// Keys whose shapes differ, in `state_dict` order.
        mismatched: Vec<ShapeMismatch>,
    },
    /// The inputs file's keys are not the entry's arguments.
    #[error(
        "the inputs file does not match {entry}'s arguments ({}): {}",
        .expected.join(", "), keys_message(.missing, .unexpected)
    )]
    Arguments {
        /// The entry's name.
        entry: String,
        /// Its arguments.
        expected: Vec<String>,
        /// Arguments the file lacks.
        missing: Vec<String>,
        /// The file's keys that are no argument, sorted.
        unexpected: Vec<String>,
    },
    /// An int64 tensor holds a value its float32 carrier cannot (`graph::dtype`).
    #[error(
        "the inputs file's '{name}' holds {value}: Tailor keeps int64 tensors as float32, exact for whole numbers within ±2^24"
    )]
    NotCarried {
        /// The argument.
        name: String,
        /// The first value out of range.
        value: i64,
    },
    /// Writing the outputs failed.
    #[error("cannot write the outputs file: {reason}")]
    Write {
        /// What the safetensors writer said.
        reason: String,
    },
}

/// A key whose tensor in the file has another shape than the module's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeMismatch {
    /// The key.
    pub name: String,
    /// The module's shape.
    pub expected: Vec<i64>,
    /// The file's shape.
    pub actual: Vec<usize>,
}

/// The `state_dict` error's text, worded as PyTorch's `load_state_dict` words it (one line
/// per kind of problem, a tab before each).
fn state_mismatch(
    entry: &str,
    missing: &[String],
    unexpected: &[String],
    mismatched: &[ShapeMismatch],
) -> String {
    let quoted = |keys: &[String]| {
        keys.iter()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = format!("error(s) in loading state_dict for {entry}:");
    if !missing.is_empty() {
        text += &format!("\n\tmissing key(s) in state_dict: {}", quoted(missing));
    }
    if !unexpected.is_empty() {
        text += &format!(
            "\n\tunexpected key(s) in state_dict: {}",
            quoted(unexpected)
        );
    }
    for m in mismatched {
        text += &format!(
            "\n\tsize mismatch for {}: copying a param with shape {:?} from checkpoint, \
             the shape in current model is {:?}",
            m.name, m.actual, m.expected
        );
    }
    text
}

/// What the inputs file may hold besides float32 tensors.
fn arguments_hint(file: &str) -> &'static str {
    match file {
        "inputs" => {
            ", int64 (I64) or bool (BOOL); an int argument is a 0-dim I64, a bool a 0-dim BOOL"
        }
        _ => "",
    }
}

pub(crate) fn keys_message(missing: &[String], unexpected: &[String]) -> String {
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("missing {}", missing.join(", ")));
    }
    if !unexpected.is_empty() {
        parts.push(format!("unexpected {}", unexpected.join(", ")));
    }
    parts.join("; ")
}

/// The values for `state`, one per tensor in its order, from a weights file's `bytes`
/// (every key matched by name, every shape checked); `entry` names the module in errors.
pub fn match_state(
    entry: &str,
    state: &[StateTensor],
    bytes: &[u8],
) -> Result<Vec<Arc<[f32]>>, WeightsError> {
    let file = read("weights", bytes)?;
    let mut loaded: BTreeMap<&str, &FileTensor> =
        file.iter().map(|t| (t.name.as_str(), t)).collect();
    let keys: BTreeMap<&str, ()> = state
        .iter()
        .flat_map(|tensor| tensor.names.iter().map(|name| (name.as_str(), ())))
        .collect();
    loaded.retain(|name, _| keys.contains_key(name) || !is_batch_count(name, &keys));
    let mut values = Vec::new();
    let (mut missing, mut mismatched) = (Vec::new(), Vec::new());
    for tensor in state {
        // A tied weight takes the value of whichever of its keys the file has (the last),
        // as `safetensors.torch.save_model` keeps one of them.
        let Some(found) = tensor
            .names
            .iter()
            .rev()
            .find_map(|n| loaded.get(n.as_str()))
        else {
            missing.extend(tensor.names.iter().cloned());
            continue;
        };
        let expected: Vec<usize> = tensor.shape.iter().map(|&d| d as usize).collect();
        if found.shape != expected {
            mismatched.push(ShapeMismatch {
                name: found.name.clone(),
                expected: tensor.shape.clone(),
                actual: found.shape.clone(),
            });
            continue;
        }
        values.push(found.floats("weights")?.into());
    }
    let unexpected: Vec<String> = loaded
        .keys()
        .filter(|name| !keys.contains_key(*name))
        .map(|name| name.to_string())
        .collect();
    if missing.is_empty() && unexpected.is_empty() && mismatched.is_empty() {
        return Ok(values);
    }
    Err(WeightsError::StateDict {
        entry: entry.to_string(),
        missing,
        unexpected,
        mismatched,
    })
}

/// Whether `name` is BatchNorm's `num_batches_tracked` of a module in `keys` (one that has
/// a `running_mean` beside it), which Tailor's BatchNorm does not keep.
fn is_batch_count(name: &str, keys: &BTreeMap<&str, ()>) -> bool {
    let (prefix, last) = name.rsplit_once('.').unwrap_or(("", name));
    let running_mean = match prefix {
        "" => "running_mean".to_string(),
        _ => format!("{prefix}.running_mean"),
    };
    last == "num_batches_tracked" && keys.contains_key(running_mean.as_str())
}

/// One call read from an inputs file.
#[derive(Clone, Debug, PartialEq)]
pub struct CallValues {
    /// The arguments: each tensor's sizes, each int and bool.
    pub call: CallShapes,
    /// Each tensor argument's values, in order, as `executor::call_inputs` takes them.
    pub values: Vec<Option<Vec<f32>>>,
}

/// A call of `entry` with the arguments `names`, from an inputs file's `bytes`: a float32
/// tensor per tensor argument (the call's sizes are its shape), a 0-dim I64 per int, a
/// 0-dim BOOL per bool.
pub fn read_call(entry: &str, names: &[String], bytes: &[u8]) -> Result<CallValues, WeightsError> {
    let file = read("inputs", bytes)?;
    let missing: Vec<String> = names
        .iter()
        .filter(|n| !file.iter().any(|t| &t.name == *n))
        .cloned()
        .collect();
    let mut unexpected: Vec<String> = file
        .iter()
        .filter(|t| !names.contains(&t.name))
        .map(|t| t.name.clone())
        .collect();
    unexpected.sort();
    if !missing.is_empty() || !unexpected.is_empty() {
        return Err(WeightsError::Arguments {
            entry: entry.to_string(),
            expected: names.to_vec(),
            missing,
            unexpected,
        });
    }
    let mut args = Vec::new();
    let mut data = Vec::new();
    for name in names {
        let Some(tensor) = file.iter().find(|t| &t.name == name) else {
            continue;
        };
        let value = match tensor.dtype {
            Dtype::F32 => {
                data.push(Some(tensor.floats("inputs")?));
                ArgValue::Tensor(
                    tensor.shape.iter().map(|&d| d as i64).collect(),
                    DType::Float32,
                )
            }
            // A 0-dim int64 or bool is a Python int or bool argument (as the inputs file
            // of a call stores them); with dims, a tensor of that dtype.
            Dtype::I64 | Dtype::BOOL if !tensor.shape.is_empty() => {
                let (values, dtype) = if tensor.dtype == Dtype::I64 {
                    (tensor.whole_numbers()?, DType::Int64)
                } else {
                    let bits = tensor.bytes.iter().map(|&b| f32::from(u8::from(b != 0)));
                    (bits.collect(), DType::Bool)
                };
                data.push(Some(values));
                ArgValue::Tensor(tensor.shape.iter().map(|&d| d as i64).collect(), dtype)
            }
            Dtype::I64 => ArgValue::Int(i64::from_le_bytes(le_bytes(&tensor.bytes))),
            Dtype::BOOL => ArgValue::Bool(tensor.bytes.first().is_some_and(|&b| b != 0)),
            _ => return Err(tensor.dtype_error("inputs")),
        };
        args.push((name.clone(), value));
    }
    Ok(CallValues {
        call: CallShapes::with_args(args),
        values: data,
    })
}

/// An outputs file: `outputs` as `out0`, `out1`, … (float32).
pub fn write_outputs(outputs: &[Tensor], dtypes: &[DType]) -> Result<Vec<u8>, WeightsError> {
    let named = outputs.iter().enumerate().map(|(i, tensor)| {
        let dtype = dtypes.get(i).copied().unwrap_or_default();
        (format!("out{i}"), Output(tensor, dtype))
    });
    safetensors::serialize(named, None).map_err(|err| WeightsError::Write {
        reason: err.to_string(),
    })
}

/// A returned tensor as the safetensors writer sees it: written in its own dtype (F32, I64
/// or BOOL), as PyTorch's `save_file` writes the same output.
struct Output<'a>(&'a Tensor, DType);

impl View for Output<'_> {
    fn dtype(&self) -> Dtype {
        match self.1 {
            DType::Float32 => Dtype::F32,
            DType::Int64 => Dtype::I64,
            DType::Int32 => Dtype::I32,
            DType::Bool => Dtype::BOOL,
        }
    }

    fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    fn data(&self) -> Cow<'_, [u8]> {
        let values = self.0.data.iter();
        match self.1 {
            DType::Float32 => values.flat_map(|v| v.to_le_bytes()).collect(),
            DType::Int64 => values.flat_map(|&v| (v as i64).to_le_bytes()).collect(),
            DType::Int32 => values.flat_map(|&v| (v as i32).to_le_bytes()).collect(),
            DType::Bool => values.map(|&v| u8::from(v != 0.0)).collect(),
        }
    }

    fn data_len(&self) -> usize {
        self.0.data.len() * self.1.size_in_bytes()
    }
}

/// One tensor of a file, its bytes copied out.
struct FileTensor {
    name: String,
    dtype: Dtype,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl FileTensor {
    /// Its values, when it is float32.
    fn floats(&self, file: &'static str) -> Result<Vec<f32>, WeightsError> {
        if self.dtype != Dtype::F32 {
            return Err(self.dtype_error(file));
        }
        Ok(self
            .bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(le_bytes(b)))
            .collect())
    }

    /// Its values as float32, when it is int64 and each is exact in float32.
    fn whole_numbers(&self) -> Result<Vec<f32>, WeightsError> {
        self.bytes
            .chunks_exact(8)
            .map(|b| {
                let value = i64::from_le_bytes(le_bytes(b));
                if DType::Int64.carries(value as f64) {
                    Ok(value as f32)
                } else {
                    Err(WeightsError::NotCarried {
                        name: self.name.clone(),
                        value,
                    })
                }
            })
            .collect()
    }

    fn dtype_error(&self, file: &'static str) -> WeightsError {
        WeightsError::Dtype {
            file,
            name: self.name.clone(),
            dtype: format!("{:?}", self.dtype),
        }
    }
}

/// The first `N` bytes of `bytes` (zeros past its end; the reader checked every length).
fn le_bytes<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    for (o, b) in out.iter_mut().zip(bytes) {
        *o = *b;
    }
    out
}

/// Every tensor of a safetensors file, sorted by name.
fn read(file: &'static str, bytes: &[u8]) -> Result<Vec<FileTensor>, WeightsError> {
    let tensors = SafeTensors::deserialize(bytes).map_err(|err| WeightsError::Format {
        file,
        reason: err.to_string(),
    })?;
    let mut read: Vec<FileTensor> = tensors
        .iter()
        .map(|(name, view)| FileTensor {
            name: name.to_string(),
            dtype: view.dtype(),
            shape: view.shape().to_vec(),
            bytes: view.data().to_vec(),
        })
        .collect();
    read.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(read)
}
