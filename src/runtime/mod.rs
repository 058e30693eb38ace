//! Running a `Schedule`: what the CPU backend (`cpu`) and the wgpu runtime (`gpu`)
//! share; `session::executor` is the one way callers run kernels on either.
//!
//! In: a schedule and one call's input tensors. Out: the symbol values of the call (bound
//! from the inputs' sizes and checked against every symbolic input dim), the concrete
//! length of every buffer and the workgroup count of every kernel. Invariant: both runtimes
//! size buffers and dispatches from `bind` alone, so they agree on what a call means; a
//! call whose sizes contradict the schedule is an error here, before any kernel runs.

pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;

use crate::lower::{Role, Schedule};
use crate::symbolic::{Bindings, Expr};

/// Names of the software rasterisers browsers and drivers fall back to, lower case.
const SOFTWARE_ADAPTERS: [&str; 5] = ["swiftshader", "llvmpipe", "lavapipe", "softpipe", "warp"];

/// Whether an adapter's name says it is a CPU emulation of a GPU (browsers before
/// `isFallbackAdapter`, and drivers, name it only so).
pub fn is_software_adapter(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SOFTWARE_ADAPTERS
        .iter()
        .any(|software| name.contains(software))
}

/// Why a schedule could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// A call's input tensor is larger than the runtimes allocate (checked before any
    /// allocation, in `u128`, so no size overflows).
    #[error(
        "input '{input}' would have {elements} elements; the memory budget of {} holds at most {limit} per tensor (the CLI's --memory-budget, the JS API's memoryBudget)",
        crate::graph::human_bytes(u128::from(*budget))
    )]
    InputTooLarge {
        /// The input.
        input: String,
        /// Its element count.
        elements: u128,
        /// The most elements one tensor may hold.
        limit: usize,
        /// The memory budget in bytes.
        budget: u64,
    },
    /// A call's input tensor has a negative size (the grammars refuse one; a caller that
    /// builds `CallShapes` itself may not).
    #[error("input '{input}' has size {size} at dim {dim}; sizes are never negative")]
    NegativeSize {
        /// The input.
        input: String,
        /// The dim.
        dim: usize,
        /// Its size.
        size: i64,
    },
    /// An integer or bool input holds a value its float32 carrier cannot (`graph::dtype`).
    #[error(
        "input '{input}' is {dtype} and holds {value}: Tailor keeps {dtype} values as float32, exact for whole numbers within ±2^24 (bools 0 or 1)"
    )]
    NotCarried {
        /// The input.
        input: String,
        /// Its dtype.
        dtype: crate::graph::DType,
        /// The first value that does not fit.
        value: f64,
    },
    /// The caller passed too few or too many tensors.
    #[error("expected {expected} input tensors, got {actual}")]
    InputCount {
        /// Inputs of the schedule.
        expected: usize,
        /// Tensors passed.
        actual: usize,
    },
    /// A tensor's sizes do not fit the schedule's symbolic input shape.
    #[error("input {input}: shape {actual:?} does not match {expected}")]
    InputShape {
        /// Input position.
        input: usize,
        /// The symbolic shape, printed.
        expected: String,
        /// The sizes passed.
        actual: Vec<usize>,
    },
    /// The caller passed too few or too many int arguments.
    #[error("expected {expected} int arguments, got {actual}")]
    IntCount {
        /// Int arguments of the schedule.
        expected: usize,
        /// Ints passed.
        actual: usize,
    },
    /// An int argument's value contradicts what the schedule was compiled for.
    #[error("int argument {input}: {actual} does not match {expected}")]
    IntValue {
        /// Position among the int arguments.
        input: usize,
        /// The expression it was traced as.
        expected: String,
        /// The value passed.
        actual: i64,
    },
    /// A size formula has no value for this call (overflow, or a symbol not bound).
    #[error("cannot evaluate {what} = {expr} for these inputs")]
    Size {
        /// Which size.
        what: String,
        /// The formula.
        expr: String,
    },
    /// A call's buffers would take more bytes than the memory budget (module state, inputs,
    /// outputs and temporaries of the memory plan, together).
    #[error(
        "this call's buffers would take {} (buffer {buffer} alone {}): more than the memory budget of {} (raise it with the CLI's --memory-budget or the JS API's memoryBudget)",
        crate::graph::human_bytes(*total_bytes),
        crate::graph::human_bytes(*buffer_bytes),
        crate::graph::human_bytes(u128::from(*budget))
    )]
    OverBudget {
        /// The largest buffer.
        buffer: String,
        /// Its bytes for this call.
        buffer_bytes: u128,
        /// The bytes of all the call's buffers.
        total_bytes: u128,
        /// The memory budget in bytes.
        budget: u64,
    },
    /// A kernel's loops would run longer than a call may, or one loop past what WGSL
    /// indexes (a reduction over a huge broadcast view, a product of huge operands).
    #[error(
        "{kernel} ({ops}) would iterate over {extents:?} for these inputs: a kernel may take at most {limit} steps, each loop at most 2^31 - 1"
    )]
    TooMuchWork {
        /// The kernel.
        kernel: String,
        /// The graph ops it computes.
        ops: String,
        /// Its loops' extents for this call.
        extents: Vec<i64>,
        /// The most steps (the product of the extents) one kernel may take.
        limit: u128,
    },
    /// A kernel addressed memory outside a buffer: a lowering bug, reported, not a crash.
    #[error("{kernel}: element {offset} of {buffer} is outside its {len_elems} elements")]
    OutOfBounds {
        /// The kernel.
        kernel: String,
        /// The buffer.
        buffer: String,
        /// The offset computed.
        offset: i64,
        /// The buffer's length.
        len_elems: usize,
    },
}

/// The most steps one kernel may take in a call (the product of its loops' extents):
/// 2^36, about a minute on one core, far past any model's largest kernel.
pub const MAX_KERNEL_STEPS: u128 = 1 << 36;

/// The concrete sizes of one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Sizes {
    /// Each shape symbol's value.
    pub bindings: Bindings,
    /// The same values indexed by symbol number (what compiled evaluators read).
    pub slots: Vec<i64>,
    /// Elements of each buffer.
    pub buffer_lens: Vec<usize>,
    /// Workgroups of each kernel.
    pub workgroups: Vec<u64>,
}

impl Sizes {
    /// Elements of the buffers the memory plan allocates at these sizes: the outputs and
    /// the shared temporaries (inputs and parameters are read where they are). A runtime
    /// holds each of them for the whole call, so their sum is the plan's peak, and all that
    /// a CPU program's arena holds after a call at these sizes.
    pub fn planned_elems(&self, schedule: &Schedule) -> usize {
        schedule
            .buffers
            .iter()
            .zip(&self.buffer_lens)
            .filter(|(buffer, _)| matches!(buffer.role, Role::Output(_) | Role::Temp))
            .map(|(_, &len_elems)| len_elems)
            .sum()
    }
}

/// Binds the schedule's symbols from the input sizes and the int arguments' values, and
/// evaluates every size.
pub fn bind(schedule: &Schedule, inputs: &[Vec<usize>], ints: &[i64]) -> Result<Sizes, RunError> {
    if inputs.len() != schedule.input_shapes.len() {
        return Err(RunError::InputCount {
            expected: schedule.input_shapes.len(),
            actual: inputs.len(),
        });
    }
    if ints.len() != schedule.int_inputs.len() {
        return Err(RunError::IntCount {
            expected: schedule.int_inputs.len(),
            actual: ints.len(),
        });
    }
    let mismatch = |input: usize| RunError::InputShape {
        input,
        expected: crate::graph::shape_to_string(&schedule.input_shapes[input]),
        actual: inputs[input].clone(),
    };
    let mut bindings = Bindings::new();
    for (shape, sizes) in &schedule.lifted {
        crate::graph::bind_sizes(shape, sizes, &mut bindings);
    }
    for (input, (shape, sizes)) in schedule.input_shapes.iter().zip(inputs).enumerate() {
        if shape.len() != sizes.len() {
            return Err(mismatch(input));
        }
        for (dim, &size) in shape.iter().zip(sizes) {
            if let Some(sym) = dim.as_sym() {
                bindings.set(sym, size as i64);
            }
        }
    }
    for (expr, &value) in schedule.int_inputs.iter().zip(ints) {
        if let Some(sym) = expr.as_sym() {
            bindings.set(sym, value);
        }
    }
    for (input, (shape, sizes)) in schedule.input_shapes.iter().zip(inputs).enumerate() {
        for (dim, &size) in shape.iter().zip(sizes) {
            if dim.eval(&bindings) != Some(size as i64) {
                return Err(mismatch(input));
            }
        }
    }
    for (input, (expr, &value)) in schedule.int_inputs.iter().zip(ints).enumerate() {
        if expr.eval(&bindings) != Some(value) {
            return Err(RunError::IntValue {
                input,
                expected: expr.to_string(),
                actual: value,
            });
        }
    }
    let eval = |what: &str, expr: &Expr| {
        expr.eval(&bindings)
            .filter(|v| *v >= 0)
            .ok_or_else(|| RunError::Size {
                what: what.to_string(),
                expr: expr.to_string(),
            })
    };
    let buffer_lens = schedule
        .buffers
        .iter()
        .map(|b| eval(&b.name, &b.len_elems).map(|v| v as usize))
        .collect::<Result<_, _>>()?;
    let workgroups = schedule
        .kernels
        .iter()
        .map(|k| eval(&format!("{} workgroups", k.name), &k.workgroups).map(|v| v as u64))
        .collect::<Result<_, _>>()?;
    // A kernel over a huge broadcast view (`x.expand(2**40, 2**20, -1).sum()`) stores
    // nothing as large as its loops run: refused here, naming its ops, for every runtime
    // (the CPU's loops would run for ever and size their scratch from the extents; WGSL
    // indexes in i32).
    let mut local = bindings.clone();
    for kernel in &schedule.kernels {
        // The extents are over the kernel's derived sizes too (`z0`, a convolution's output
        // length), each over the shape symbols and the ones before it.
        for size in &kernel.sizes {
            let value = size.value.eval(&local).ok_or_else(|| RunError::Size {
                what: format!("{} {}", kernel.name, size.name),
                expr: size.value.to_string(),
            })?;
            local.set(size.sym, value);
        }
        let extents = kernel
            .body
            .loop_extents()
            .iter()
            .map(|extent| {
                extent
                    .eval(&local)
                    .filter(|v| *v >= 0)
                    .ok_or_else(|| RunError::Size {
                        what: format!("{} loop", kernel.name),
                        expr: extent.to_string(),
                    })
            })
            .collect::<Result<Vec<i64>, _>>()?;
        let steps = extents
            .iter()
            .fold(1u128, |acc, &e| acc.saturating_mul(e as u128));
        if steps > MAX_KERNEL_STEPS || extents.iter().any(|&e| e > i64::from(i32::MAX)) {
            return Err(RunError::TooMuchWork {
                kernel: kernel.name.clone(),
                ops: kernel.node_names.join(", "),
                extents,
                limit: MAX_KERNEL_STEPS,
            });
        }
    }
    let mut slots = vec![0; schedule.first_index_sym as usize];
    for (sym, value) in bindings.iter() {
        if let Some(slot) = slots.get_mut(sym.index()) {
            *slot = value;
        }
    }
    Ok(Sizes {
        bindings,
        slots,
        buffer_lens,
        workgroups,
    })
}

/// Shapes of the call's outputs.
pub fn output_shapes(schedule: &Schedule, sizes: &Sizes) -> Result<Vec<Vec<usize>>, RunError> {
    schedule
        .output_shapes
        .iter()
        .map(|shape| {
            shape
                .iter()
                .map(|dim| {
                    dim.eval(&sizes.bindings)
                        .filter(|v| *v >= 0)
                        .map(|v| v as usize)
                        .ok_or_else(|| RunError::Size {
                            what: "output dim".into(),
                            expr: dim.to_string(),
                        })
                })
                .collect()
        })
        .collect()
}
