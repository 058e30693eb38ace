//! The CPU reference: interprets a `Graph` op by op in plain Rust.
//!
//! Input: a graph, the symbol values of this call (`Bindings`) and one `Tensor` per graph
//! input. Output: the returned tensors. Invariant: this is the numerical oracle; it is
//! written for obviousness, not speed, and every later back end is checked against it. Its
//! matrix products (linear, matmul, convolution as columns) go through ndarray's GEMM, so
//! the tests and the eager path do not wait on naive multiply-adds.

use super::budget::{human_bytes, max_elements, memory_budget};
use super::{
    AttentionMask, DType, Graph, Init, NodeId, Op, PoolKind, ReduceKind, Scalar, layer_norm_row,
    log_softmax_row, random_value, softmax_row,
};
use crate::symbolic::{Bindings, Expr};
use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, ShapeBuilder};

/// A dense, contiguous, row-major f32 tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Sizes, outermost first.
    pub shape: Vec<usize>,
    /// `numel(&shape)` values, outermost dim slowest.
    pub data: Vec<f32>,
}

/// Why the reference could not run a graph.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// A size expression could not be evaluated (a symbol without a value, or overflow).
    #[error("node '{node}': cannot evaluate size {expr} for these inputs")]
    Size {
        /// The node whose size failed.
        node: String,
        /// The expression.
        expr: String,
    },
    /// A tensor would take more than the memory budget allows (`budget::max_elements`).
    #[error(
        "node '{node}': {elements} elements is more than the memory budget allows ({limit} elements in {}; the CLI's --memory-budget, the JS API's memoryBudget)",
        human_bytes(u128::from(*budget))
    )]
    TooLarge {
        /// The node.
        node: String,
        /// Its element count.
        elements: u128,
        /// The most elements one tensor may hold.
        limit: usize,
        /// The budget in bytes.
        budget: u64,
    },
    /// An embedding's id outside its table (PyTorch's `IndexError: index out of range in
    /// self`).
    #[error(
        "node '{node}': id {id} is outside the embedding's {rows} rows (IndexError: index out of range in self)"
    )]
    IdOutOfRange {
        /// The embedding node.
        node: String,
        /// The id.
        id: f32,
        /// The table's rows.
        rows: usize,
    },
    /// The caller passed the wrong number of inputs or a wrong shape.
    #[error("input '{input}': expected shape {expected:?}, got {actual:?}")]
    InputShape {
        /// Input name.
        input: String,
        /// Shape implied by the bindings.
        expected: Vec<usize>,
        /// Shape passed.
        actual: Vec<usize>,
    },
}

/// The element count of `shape`: 0 when any size is 0, whatever the others are (PyTorch's
/// numel), else their product, saturating at `usize::MAX` (every caller refuses counts above
/// the budget's [`max_elements`] before it allocates).
pub fn numel(shape: &[usize]) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    shape.iter().fold(1usize, |n, &size| n.saturating_mul(size))
}

/// The element count of sizes as a caller gave them (a call's input, a parameter), in `u128`
/// so that no product overflows; a negative size counts as its magnitude (callers that must
/// refuse one check first). Compare it with [`max_elements`] before allocating.
pub fn element_count(sizes: &[i64]) -> u128 {
    sizes.iter().fold(1u128, |n, &d| {
        n.saturating_mul(u128::from(d.unsigned_abs()))
    })
}

impl Tensor {
    /// A tensor of zeros.
    pub fn zeros(shape: Vec<usize>) -> Tensor {
        let n = numel(&shape);
        Tensor {
            shape,
            data: vec![0.0; n],
        }
    }

    /// A tensor filled by `init`, seeded by `seed`.
    pub fn init(shape: Vec<usize>, init: Init, seed: u64) -> Tensor {
        let n: usize = numel(&shape);
        if let Init::Data(values) = &init {
            return Tensor {
                shape,
                data: values.to_vec(),
            };
        }
        let mut rng = SplitMix64(seed);
        if let Init::Orthogonal { gain } = init {
            let rows = shape.first().copied().unwrap_or(1);
            let data = orthogonal(rows, n / rows.max(1), gain, &mut rng);
            return Tensor { shape, data };
        }
        let data = (0..n)
            .map(|i| match init {
                Init::Uniform { bound } => ((rng.unit() * 2.0 - 1.0) * bound) as f32,
                Init::Normal { std } => (rng.normal() * std) as f32,
                Init::Unit => rng.unit() as f32,
                Init::Fill(value) => value as f32,
                Init::Arange { start, step } => (start + step * i as f64) as f32,
                Init::Data(ref values) => values[i],
                Init::Orthogonal { .. } => unreachable!("made above"),
            })
            .collect();
        Tensor { shape, data }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// A `rows × cols` matrix with orthonormal rows (when `rows <= cols`) or columns, times
/// `gain`: modified Gram–Schmidt over the longer vectors of a normal matrix, which is its QR
/// factorisation's Q with R's diagonal positive (what PyTorch's `q * sign(diag(r))` gives).
fn orthogonal(rows: usize, cols: usize, gain: f64, rng: &mut SplitMix64) -> Vec<f32> {
    let (count, len) = (rows.min(cols), rows.max(cols));
    let mut vectors: Vec<Vec<f64>> = (0..count)
        .map(|_| (0..len).map(|_| rng.normal()).collect())
        .collect();
    for i in 0..count {
        let (done, rest) = vectors.split_at_mut(i);
        let v = &mut rest[0];
        for q in done.iter() {
            let dot: f64 = q.iter().zip(v.iter()).map(|(a, b)| a * b).sum();
            v.iter_mut().zip(q).for_each(|(x, q)| *x -= dot * q);
        }
        let norm = v
            .iter()
            .map(|x| x * x)
            .sum::<f64>()
            .sqrt()
            .max(f64::MIN_POSITIVE);
        v.iter_mut().for_each(|x| *x /= norm);
    }
    let mut data = vec![0.0f32; rows * cols];
    for (i, v) in vectors.iter().enumerate() {
        for (j, &x) in v.iter().enumerate() {
            // Orthonormal rows when rows <= cols, else orthonormal columns.
            let at = if rows <= cols {
                i * cols + j
            } else {
                j * cols + i
            };
            data[at] = (x * gain) as f32;
        }
    }
    data
}

/// Seeds derived from names, so a parameter's values depend only on its path.
pub fn seed_of(name: &str) -> u64 {
    // FNV-1a: stable across platforms and releases, unlike `DefaultHasher`.
    name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Standard-normal inputs for a call, seeded by the call index and the input name.
pub fn random_inputs(shapes: &[(String, Vec<usize>)], call_seed: u64) -> Vec<Tensor> {
    shapes
        .iter()
        .map(|(name, shape)| {
            Tensor::init(
                shape.clone(),
                Init::Normal { std: 1.0 },
                seed_of(name) ^ call_seed,
            )
        })
        .collect()
}

impl Tensor {
    /// Standard-normal draws made values of `dtype`: integers from 0 to 15 (`|v| * 8`,
    /// whole), bools where the draw is positive; float32 draws stay.
    pub fn as_random(mut self, dtype: DType) -> Tensor {
        for value in &mut self.data {
            *value = match dtype {
                DType::Float32 => *value,
                DType::Int64 | DType::Int32 => (value.abs() * 8.0).floor().min(15.0),
                DType::Bool => f32::from(u8::from(*value > 0.0)),
            };
        }
        self
    }
}

/// A small, well-known generator (Steele et al.'s SplitMix64); quality is ample for test data.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 bits.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal by Box–Muller.
    fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(f64::MIN_POSITIVE);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Runs `graph` on `inputs` (one per graph input, in order) with symbol values `bindings`.
pub fn eval(
    graph: &Graph,
    bindings: &Bindings,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>, EvalError> {
    let mut values: Vec<Option<Tensor>> = vec![None; graph.nodes.len()];
    let mut next_input = 0;
    for node in &graph.nodes {
        let size = |expr: &Expr| -> Result<usize, EvalError> {
            expr.eval(bindings)
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| EvalError::Size {
                    node: node.name.clone(),
                    expr: expr.to_string(),
                })
        };
        let shape = node
            .shape
            .iter()
            .map(size)
            .collect::<Result<Vec<usize>, _>>()?;
        let elements = shape
            .iter()
            .fold(1u128, |acc, &d| acc.saturating_mul(d as u128));
        let limit = max_elements();
        if elements > limit as u128 {
            return Err(EvalError::TooLarge {
                node: node.name.clone(),
                elements,
                limit,
                budget: memory_budget(),
            });
        }
        let arg = |i: usize| -> &Tensor {
            values[node.inputs[i].index()]
                .as_ref()
                .expect("inputs are evaluated before their users")
        };
        let out = match &node.op {
            Op::Input { name } => {
                let tensor = inputs[next_input].clone();
                next_input += 1;
                if tensor.shape != shape {
                    return Err(EvalError::InputShape {
                        input: name.clone(),
                        expected: shape,
                        actual: tensor.shape,
                    });
                }
                tensor
            }
            Op::Param { path: name, init } | Op::Constant { name, init } => {
                Tensor::init(shape, init.clone(), seed_of(name))
            }
            Op::Linear => linear(arg(0), arg(1), node.inputs.get(2).map(|_| arg(2)), shape),
            Op::Matmul => matmul(arg(0), arg(1), shape),
            Op::Conv {
                stride,
                padding,
                dilation,
                groups,
            } => {
                let bias = node.inputs.get(2).map(|_| arg(2));
                let window = Window {
                    stride,
                    padding,
                    dilation,
                    groups: *groups as usize,
                };
                conv(arg(0), arg(1), bias, &window, shape)
            }
            Op::ConvTranspose {
                stride,
                padding,
                dilation,
                groups,
                ..
            } => {
                let bias = node.inputs.get(2).map(|_| arg(2));
                let window = Window {
                    stride,
                    padding,
                    dilation,
                    groups: *groups as usize,
                };
                conv_transpose(arg(0), arg(1), bias, &window, shape)
            }
            Op::BatchNorm { eps } => batch_norm(arg(0), arg(1), arg(2), arg(3), arg(4), *eps),
            Op::LayerNorm {
                normalized_dims,
                eps,
            } => {
                let affine = (node.inputs.len() == 3).then(|| (arg(1), arg(2)));
                layer_norm(arg(0), *normalized_dims, *eps, affine)
            }
            Op::Pool {
                kind,
                kernel,
                stride,
                padding,
            } => pool(arg(0), *kind, kernel, stride, padding, shape),
            Op::Unary(op) => map(arg(0), |v| op.apply(v)),
            Op::Cast { to } => {
                let step = super::dtype::cast_step(graph.node(node.inputs[0]).dtype, *to);
                map(arg(0), |v| step.apply(v))
            }
            Op::Binary(op) => broadcast_binary(arg(0), arg(1), shape, |a, b| op.apply(a, b)),
            Op::Scalar {
                op,
                scalar,
                tensor_on_left,
            } => {
                let value = match scalar {
                    Scalar::Number(v) => *v as f32,
                    // An int argument's symbol may be negative, unlike a size.
                    Scalar::Size(expr) => expr.eval(bindings).ok_or_else(|| EvalError::Size {
                        node: node.name.clone(),
                        expr: expr.to_string(),
                    })? as f32,
                };
                if *tensor_on_left {
                    map(arg(0), |v| op.apply(v, value))
                } else {
                    map(arg(0), |v| op.apply(value, v))
                }
            }
            Op::Where => {
                let n = numel(&shape);
                let (cond, a, b) = (arg(0), arg(1), arg(2));
                let data = (0..n)
                    .map(|flat| {
                        let index = unravel(flat, &shape);
                        if cond.data[broadcast_offset(&index, &cond.shape)] != 0.0 {
                            a.data[broadcast_offset(&index, &a.shape)]
                        } else {
                            b.data[broadcast_offset(&index, &b.shape)]
                        }
                    })
                    .collect();
                Tensor { shape, data }
            }
            Op::Random { kind, seed } => {
                let n: usize = numel(&shape);
                let data = (0..n)
                    .map(|i| random_value(*kind, *seed, i as u32))
                    .collect();
                Tensor { shape, data }
            }
            Op::Triangle { upper, diagonal } => {
                let x = arg(0);
                let rank = shape.len();
                let data = (0..x.len())
                    .map(|flat| {
                        let index = unravel(flat, &shape);
                        let offset = index[rank - 1] as i64 - index[rank - 2] as i64;
                        let keep = if *upper {
                            offset >= *diagonal
                        } else {
                            offset <= *diagonal
                        };
                        if keep { x.data[flat] } else { 0.0 }
                    })
                    .collect();
                Tensor { shape, data }
            }
            Op::Arange { start, step } => {
                let data = (0..shape[0])
                    .map(|i| (start + step * i as f64) as f32)
                    .collect();
                Tensor { shape, data }
            }
            Op::Full { value } => {
                let n = numel(&shape);
                Tensor {
                    shape,
                    data: vec![*value as f32; n],
                }
            }
            Op::Softmax { dim } => along(arg(0), *dim, softmax_row),
            Op::LogSoftmax { dim } => along(arg(0), *dim, log_softmax_row),
            Op::Attention {
                causal,
                scale,
                mask,
            } => attention(
                [arg(0), arg(1), arg(2)],
                node.inputs.get(3).map(|_| (arg(3), *mask)),
                *causal,
                *scale,
                shape,
            ),
            Op::Reduce { kind, dims, .. } => reduce(arg(0), *kind, dims, shape),
            Op::Reshape => Tensor {
                shape,
                data: arg(0).data.clone(),
            },
            Op::Expand => {
                let x = arg(0);
                let n = numel(&shape);
                let data = (0..n)
                    .map(|flat| x.data[broadcast_offset(&unravel(flat, &shape), &x.shape)])
                    .collect();
                Tensor { shape, data }
            }
            Op::Permute { perm } => permute(arg(0), perm, shape),
            Op::Slice { dim, start, step } => {
                let start = size(start)?;
                gather_along(arg(0), *dim, shape, |i| start + i * *step as usize)
            }
            Op::Pad {
                dim, before, value, ..
            } => {
                let before = before.eval(bindings).ok_or_else(|| EvalError::Size {
                    node: node.name.clone(),
                    expr: before.to_string(),
                })?;
                pad(arg(0), *dim, before, *value as f32, shape)
            }
            Op::UpsampleLinear { dim, align_corners } => {
                upsample_linear(arg(0), *dim, *align_corners, shape)
            }
            Op::UpsampleNearest { dim } => {
                let (input, output) = (arg(0).shape[*dim], shape[*dim]);
                gather_along(arg(0), *dim, shape, |at| {
                    super::nearest_source(at, input, output)
                })
            }
            Op::Select { dim, index } => {
                let index = size(index)?;
                let mut kept = arg(0).shape.clone();
                kept[*dim] = 1;
                let mut taken = gather_along(arg(0), *dim, kept, |_| index);
                taken.shape = shape;
                taken
            }
            Op::Cat { dim } => {
                let parts: Vec<&Tensor> = (0..node.inputs.len()).map(arg).collect();
                cat(&parts, *dim, shape)
            }
            Op::Embedding => embedding(&node.name, arg(0), arg(1), shape)?,
            Op::Output => continue,
        };
        values[node.id.index()] = Some(out);
    }
    Ok(graph
        .outputs()
        .iter()
        .map(|&id: &NodeId| values[id.index()].clone().expect("outputs are evaluated"))
        .collect())
}

fn map(x: &Tensor, f: impl Fn(f32) -> f32) -> Tensor {
    Tensor {
        shape: x.shape.clone(),
        data: x.data.iter().map(|&v| f(v)).collect(),
    }
}

/// Row-major strides of a shape.
/// The row-major buffer position of `index` in a tensor of these `strides`.
fn offset(index: &[usize], strides: &[usize]) -> usize {
    index.iter().zip(strides).map(|(i, s)| i * s).sum()
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}

/// Multi-index of a flat position.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        if shape[d] > 0 {
            index[d] = flat % shape[d];
            flat /= shape[d];
        }
    }
    index
}

/// Flat position in `shape` of the broadcast multi-index `out_index` (right-aligned).
fn broadcast_offset(out_index: &[usize], shape: &[usize]) -> usize {
    let skip = out_index.len() - shape.len();
    let strides = strides(shape);
    shape
        .iter()
        .enumerate()
        .map(|(d, &n)| {
            if n == 1 {
                0
            } else {
                out_index[skip + d] * strides[d]
            }
        })
        .sum()
}

fn broadcast_binary(
    a: &Tensor,
    b: &Tensor,
    shape: Vec<usize>,
    f: impl Fn(f32, f32) -> f32,
) -> Tensor {
    let n = numel(&shape);
    let data = (0..n)
        .map(|flat| {
            let index = unravel(flat, &shape);
            f(
                a.data[broadcast_offset(&index, &a.shape)],
                b.data[broadcast_offset(&index, &b.shape)],
            )
        })
        .collect();
    Tensor { shape, data }
}

fn linear(x: &Tensor, weight: &Tensor, bias: Option<&Tensor>, shape: Vec<usize>) -> Tensor {
    let (out_features, in_features) = (weight.shape[0], weight.shape[1]);
    let rows = x.len() / in_features.max(1);
    let mut out = Tensor::zeros(shape);
    let x = ArrayView2::from_shape((rows, in_features), &x.data[..rows * in_features])
        .expect("the input fits its data");
    let w = ArrayView2::from_shape((out_features, in_features), &weight.data[..])
        .expect("the weight fits its data");
    let mut c = ArrayViewMut2::from_shape((rows, out_features), &mut out.data[..])
        .expect("the output fits its data");
    general_mat_mul(1.0, &x, &w.t(), 0.0, &mut c);
    if let Some(bias) = bias {
        for row in out.data.chunks_mut(out_features.max(1)) {
            row.iter_mut().zip(&bias.data).for_each(|(v, b)| *v += b);
        }
    }
    out
}

/// `softmax(q @ kᵀ · scale + mask) @ v`, PyTorch's math reference for
/// `scaled_dot_product_attention`: the scale is `1/sqrt(q.size(-1))` unless given; a causal
/// mask keeps key `j` for query `i` where `j <= i`; a bool mask keeps where it is true and
/// a float mask is added, either broadcast to the scores.
fn attention(
    [q, k, v]: [&Tensor; 3],
    mask: Option<(&Tensor, AttentionMask)>,
    causal: bool,
    scale: Option<f64>,
    shape: Vec<usize>,
) -> Tensor {
    let rank = k.shape.len();
    let mut perm: Vec<usize> = (0..rank).collect();
    perm.swap(rank - 2, rank - 1);
    let mut kt_shape = k.shape.clone();
    kt_shape.swap(rank - 2, rank - 1);
    let kt = permute(k, &perm, kt_shape);
    let keys = k.shape[rank - 2];
    let mut scores_shape = shape.clone();
    let last = scores_shape.len() - 1;
    scores_shape[last] = keys;
    let mut scores = matmul(q, &kt, scores_shape.clone());
    let head = q.shape[q.shape.len() - 1] as f64;
    let factor = scale.unwrap_or(1.0 / head.sqrt()) as f32;
    for (flat, score) in scores.data.iter_mut().enumerate() {
        *score *= factor;
        let index = unravel(flat, &scores_shape);
        let (i, j) = (index[last - 1], index[last]);
        if causal && j > i {
            *score = f32::NEG_INFINITY;
        }
        if let Some((mask, kind)) = mask {
            let value = mask.data[broadcast_offset(&index, &mask.shape)];
            match kind {
                AttentionMask::Keep if value == 0.0 => *score = f32::NEG_INFINITY,
                AttentionMask::Add => *score += value,
                _ => {}
            }
        }
    }
    let weights = along(&scores, last, softmax_row);
    matmul(&weights, v, shape)
}

fn matmul(a: &Tensor, b: &Tensor, shape: Vec<usize>) -> Tensor {
    // Promote 1-d operands as torch.matmul does, then drop the added dimension via `shape`.
    let a_shape = if a.shape.len() == 1 {
        vec![1, a.shape[0]]
    } else {
        a.shape.clone()
    };
    let b_shape = if b.shape.len() == 1 {
        vec![b.shape[0], 1]
    } else {
        b.shape.clone()
    };
    let (m, k) = (a_shape[a_shape.len() - 2], a_shape[a_shape.len() - 1]);
    let n = b_shape[b_shape.len() - 1];
    let batch_rank = a_shape.len().max(b_shape.len()) - 2;
    let batch: Vec<usize> = (0..batch_rank)
        .map(|d| {
            let dim = |s: &[usize]| {
                let offset = batch_rank + 2 - s.len();
                if d < offset { 1 } else { s[d - offset] }
            };
            dim(&a_shape).max(dim(&b_shape))
        })
        .collect();
    let a_batch = &a_shape[..a_shape.len() - 2];
    let b_batch = &b_shape[..b_shape.len() - 2];
    let n_batches: usize = numel(&batch);
    let mut data = vec![0.0; n_batches * m * n];
    for bi in 0..n_batches {
        let index = unravel(bi, &batch);
        let a_off = if a_batch.is_empty() {
            0
        } else {
            broadcast_offset(&index, a_batch)
        } * m
            * k;
        let b_off = if b_batch.is_empty() {
            0
        } else {
            broadcast_offset(&index, b_batch)
        } * k
            * n;
        product(
            &a.data[a_off..a_off + m * k],
            &b.data[b_off..b_off + k * n],
            (m, k, n),
            &mut data[bi * m * n..(bi + 1) * m * n],
        );
    }
    Tensor { shape, data }
}

/// A convolution's window and channel grouping.
struct Window<'a> {
    stride: &'a [i64],
    padding: &'a [i64],
    dilation: &'a [i64],
    groups: usize,
}

fn conv(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    window: &Window,
    shape: Vec<usize>,
) -> Tensor {
    let Window {
        stride,
        padding,
        dilation,
        groups,
    } = *window;
    let groups = groups.max(1);
    let (batch, in_ch) = (x.shape[0], x.shape[1]);
    let out_ch = weight.shape[0];
    // Each output channel reads the `group_in` input channels of its group.
    let group_in = weight.shape[1];
    let group_out = out_ch / groups;
    let in_sizes = &x.shape[2..];
    let kernel = &weight.shape[2..];
    let out_sizes = shape[2..].to_vec();
    let mut out = Tensor::zeros(shape);
    let out_points: usize = numel(&out_sizes);
    let kernel_points: usize = numel(kernel);
    let in_points: usize = numel(in_sizes);
    let rows = group_in * kernel_points;
    // The output points go in chunks whose scratch (the taps, the columns) stays near
    // `SCRATCH` elements, however large the kernel or the image.
    const SCRATCH: usize = 1 << 20;
    let chunk = (SCRATCH / rows.max(kernel_points).max(1)).clamp(1, out_points.max(1));
    let mut taps: Vec<Option<usize>> = Vec::with_capacity(kernel_points * chunk);
    let mut columns = vec![0.0f32; rows * chunk];
    for p0 in (0..out_points).step_by(chunk) {
        let points = chunk.min(out_points - p0);
        // Which input point each kernel tap reads at each of these output points (`None`:
        // padding), tap by tap: the same for every image and channel.
        taps.clear();
        for q in 0..kernel_points {
            let k_pos = unravel(q, kernel);
            taps.extend((p0..p0 + points).map(|p| {
                let out_pos = unravel(p, &out_sizes);
                let mut in_flat = 0usize;
                for d in 0..stride.len() {
                    let pos =
                        out_pos[d] as i64 * stride[d] - padding[d] + k_pos[d] as i64 * dilation[d];
                    if pos < 0 || pos >= in_sizes[d] as i64 {
                        return None;
                    }
                    in_flat = in_flat * in_sizes[d] + pos as usize;
                }
                Some(in_flat)
            }));
        }
        // Per image and group, the input gathered into one column per output point
        // (im2col), then the group's weights times the columns: one matrix product.
        for n in 0..batch {
            for g in 0..groups {
                for c in 0..group_in {
                    let start = (n * in_ch + g * group_in + c) * in_points;
                    let plane = &x.data[start..start + in_points];
                    for q in 0..kernel_points {
                        let row = (c * kernel_points + q) * points;
                        let reads = &taps[q * points..(q + 1) * points];
                        for (column, read) in columns[row..row + points].iter_mut().zip(reads) {
                            *column = read.map_or(0.0, |i| plane[i]);
                        }
                    }
                }
                let weights = g * group_out * rows;
                let a = ArrayView2::from_shape(
                    (group_out, rows),
                    &weight.data[weights..weights + group_out * rows],
                )
                .expect("the group's weights fit");
                let b = ArrayView2::from_shape((rows, points), &columns[..rows * points])
                    .expect("the columns fit");
                // The group's output channels at these points: rows `out_points` apart.
                let start = (n * out_ch + g * group_out) * out_points + p0;
                let mut c = ArrayViewMut2::from_shape(
                    (group_out, points).strides((out_points, 1)),
                    &mut out.data[start..],
                )
                .expect("the output fits");
                general_mat_mul(1.0, &a, &b, 0.0, &mut c);
            }
        }
    }
    if let Some(bias) = bias {
        for (plane, o) in out
            .data
            .chunks_mut(out_points.max(1))
            .zip((0..out_ch).cycle())
        {
            plane.iter_mut().for_each(|v| *v += bias.data[o]);
        }
    }
    out
}

/// `c = a @ b` for row-major `a` (m×k), `b` (k×n) and `c` (m×n), by ndarray's matrix
/// product (matrixmultiply's kernels): the reference's index logic stays in plain loops,
/// its multiply-adds in a GEMM.
fn product(a: &[f32], b: &[f32], (m, k, n): (usize, usize, usize), c: &mut [f32]) {
    let a = ArrayView2::from_shape((m, k), &a[..m * k]).expect("a fits its data");
    let b = ArrayView2::from_shape((k, n), &b[..k * n]).expect("b fits its data");
    let mut c = ArrayViewMut2::from_shape((m, n), &mut c[..m * n]).expect("c fits its data");
    general_mat_mul(1.0, &a, &b, 0.0, &mut c);
}

/// The scatter form: each input element, times each tap, adds to one output element.
fn conv_transpose(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    window: &Window,
    shape: Vec<usize>,
) -> Tensor {
    let Window {
        stride,
        padding,
        dilation,
        groups,
    } = *window;
    let spatial = stride.len();
    let (batch, in_ch) = (x.shape[0], x.shape[1]);
    let (group_in, group_out) = (in_ch / groups.max(1), weight.shape[1]);
    let out_ch = shape[1];
    let in_sizes = &x.shape[2..];
    let kernel = &weight.shape[2..];
    let out_sizes = shape[2..].to_vec();
    let in_points: usize = numel(in_sizes);
    let out_points: usize = numel(&out_sizes);
    let kernel_points: usize = numel(kernel);
    let k_positions: Vec<Vec<usize>> = (0..kernel_points).map(|q| unravel(q, kernel)).collect();
    let mut out = Tensor::zeros(shape);
    for n in 0..batch {
        for o in 0..out_ch {
            let start = (n * out_ch + o) * out_points;
            let b = bias.map_or(0.0, |b| b.data[o]);
            out.data[start..start + out_points].fill(b);
        }
        for c in 0..in_ch {
            let group = c / group_in.max(1);
            for p in 0..in_points {
                let in_pos = unravel(p, in_sizes);
                let xv = x.data[(n * in_ch + c) * in_points + p];
                for (q, k_pos) in k_positions.iter().enumerate() {
                    let mut out_flat = 0usize;
                    let mut inside = true;
                    for d in 0..spatial {
                        let pos = in_pos[d] as i64 * stride[d] - padding[d]
                            + k_pos[d] as i64 * dilation[d];
                        if pos < 0 || pos >= out_sizes[d] as i64 {
                            inside = false;
                            break;
                        }
                        out_flat = out_flat * out_sizes[d] + pos as usize;
                    }
                    if !inside {
                        continue;
                    }
                    for o_local in 0..group_out {
                        let o = group * group_out + o_local;
                        let wv = weight.data[(c * group_out + o_local) * kernel_points + q];
                        out.data[(n * out_ch + o) * out_points + out_flat] += xv * wv;
                    }
                }
            }
        }
    }
    out
}

fn batch_norm(
    x: &Tensor,
    mean: &Tensor,
    var: &Tensor,
    weight: &Tensor,
    bias: &Tensor,
    eps: f64,
) -> Tensor {
    let channels = x.shape[1];
    let inner: usize = numel(&x.shape[2..]);
    let mut out = x.clone();
    for (flat, value) in out.data.iter_mut().enumerate() {
        let c = (flat / inner.max(1)) % channels;
        let scale = weight.data[c] / (var.data[c] + eps as f32).sqrt();
        *value = (*value - mean.data[c]) * scale + bias.data[c];
    }
    out
}

fn layer_norm(
    x: &Tensor,
    normalized_dims: usize,
    eps: f64,
    affine: Option<(&Tensor, &Tensor)>,
) -> Tensor {
    let inner: usize = numel(&x.shape[x.shape.len() - normalized_dims..]);
    let mut out = x.clone();
    for row in out.data.chunks_mut(inner.max(1)) {
        layer_norm_row(row, eps as f32);
        if let Some((w, b)) = affine {
            for (i, value) in row.iter_mut().enumerate() {
                *value = *value * w.data[i] + b.data[i];
            }
        }
    }
    out
}

fn pool(
    x: &Tensor,
    kind: PoolKind,
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    shape: Vec<usize>,
) -> Tensor {
    let rank = x.shape.len();
    let (h, w) = (x.shape[rank - 2], x.shape[rank - 1]);
    let (oh, ow) = (shape[rank - 2], shape[rank - 1]);
    let planes = x.len() / (h * w).max(1);
    let reduction = kind.reduction();
    let window = (kernel[0] * kernel[1]) as usize;
    let mut out = Tensor::zeros(shape);
    for plane in 0..planes {
        for i in 0..oh {
            for j in 0..ow {
                let mut acc = reduction.identity();
                for ki in 0..kernel[0] {
                    for kj in 0..kernel[1] {
                        let y = i as i64 * stride[0] - padding[0] + ki;
                        let x_pos = j as i64 * stride[1] - padding[1] + kj;
                        if y >= 0 && y < h as i64 && x_pos >= 0 && x_pos < w as i64 {
                            let value = x.data[plane * h * w + y as usize * w + x_pos as usize];
                            acc = reduction.combine(acc, value);
                        }
                    }
                }
                out.data[plane * oh * ow + i * ow + j] = reduction.finish(acc, window);
            }
        }
    }
    out
}

/// `x` with every row along `dim` replaced by `row_op` of it (softmax, log-softmax).
fn along(x: &Tensor, dim: usize, row_op: fn(&mut [f32])) -> Tensor {
    let strides = strides(&x.shape);
    let len = x.shape[dim];
    let mut out = x.clone();
    let mut row = Vec::with_capacity(len);
    for flat in 0..x.len() {
        if !(flat / strides[dim]).is_multiple_of(len.max(1)) {
            continue;
        }
        let lane = |i: usize| flat + i * strides[dim];
        row.clear();
        row.extend((0..len).map(|i| x.data[lane(i)]));
        row_op(&mut row);
        for (i, &value) in row.iter().enumerate() {
            out.data[lane(i)] = value;
        }
    }
    out
}

fn reduce(x: &Tensor, kind: ReduceKind, dims: &[usize], shape: Vec<usize>) -> Tensor {
    let kept_shape: Vec<usize> = x
        .shape
        .iter()
        .enumerate()
        .map(|(d, &n)| if dims.contains(&d) { 1 } else { n })
        .collect();
    let n_out: usize = numel(&kept_shape);
    let mut acc = vec![kind.identity(); n_out];
    let kept_strides = strides(&kept_shape);
    for (flat, &value) in x.data.iter().enumerate() {
        let index = unravel(flat, &x.shape);
        let target: usize = index
            .iter()
            .enumerate()
            .map(|(d, &i)| {
                if dims.contains(&d) {
                    0
                } else {
                    i * kept_strides[d]
                }
            })
            .sum();
        acc[target] = kind.combine(acc[target], value);
    }
    let count: usize = dims.iter().map(|&d| x.shape[d]).product();
    acc.iter_mut().for_each(|v| *v = kind.finish(*v, count));
    Tensor { shape, data: acc }
}

fn permute(x: &Tensor, perm: &[usize], shape: Vec<usize>) -> Tensor {
    let in_strides = strides(&x.shape);
    let n = numel(&shape);
    let data = (0..n)
        .map(|flat| {
            let index = unravel(flat, &shape);
            let offset: usize = index
                .iter()
                .enumerate()
                .map(|(d, &i)| i * in_strides[perm[d]])
                .sum();
            x.data[offset]
        })
        .collect();
    Tensor { shape, data }
}

/// Output element at index `i` along `dim` reads input index `source(i)` along `dim`.
fn gather_along(
    x: &Tensor,
    dim: usize,
    shape: Vec<usize>,
    source: impl Fn(usize) -> usize,
) -> Tensor {
    let in_strides = strides(&x.shape);
    let n = numel(&shape);
    let data = (0..n)
        .map(|flat| {
            let mut index = unravel(flat, &shape);
            index[dim] = source(index[dim]);
            x.data[offset(&index, &in_strides)]
        })
        .collect();
    Tensor { shape, data }
}

/// Constant padding along `dim`: output position `i` there reads input position
/// `i - before` when that is inside the input, else `value`.
fn pad(x: &Tensor, dim: usize, before: i64, value: f32, shape: Vec<usize>) -> Tensor {
    let in_strides = strides(&x.shape);
    let n = numel(&shape);
    let data = (0..n)
        .map(|flat| {
            let mut index = unravel(flat, &shape);
            match usize::try_from(index[dim] as i64 - before) {
                Ok(source) if source < x.shape[dim] => {
                    index[dim] = source;
                    x.data[offset(&index, &in_strides)]
                }
                _ => value,
            }
        })
        .collect();
    Tensor { shape, data }
}

/// Linear interpolation along `dim` as PyTorch's CPU kernel computes it, in f32: the
/// source position from the float scale, clamped, and the two neighbours' weights
/// `1 − λ` and `λ`.
fn upsample_linear(x: &Tensor, dim: usize, align_corners: bool, shape: Vec<usize>) -> Tensor {
    let (input, output) = (x.shape[dim], shape[dim]);
    let scale = match (align_corners, output > 1) {
        (true, true) => (input - 1) as f32 / (output - 1) as f32,
        (true, false) => 0.0,
        (false, _) => input as f32 / output as f32,
    };
    let in_strides = strides(&x.shape);
    let n = numel(&shape);
    let data = (0..n)
        .map(|flat| {
            let mut index = unravel(flat, &shape);
            let at = index[dim] as f32;
            let source = if align_corners {
                scale * at
            } else {
                (scale * (at + 0.5) - 0.5).max(0.0)
            };
            let low = (source.floor() as usize).min(input - 1);
            let high = low + usize::from(low < input - 1);
            let lambda = (source - low as f32).clamp(0.0, 1.0);
            let mut read = |position: usize| {
                index[dim] = position;
                x.data[offset(&index, &in_strides)]
            };
            (1.0 - lambda) * read(low) + lambda * read(high)
        })
        .collect();
    Tensor { shape, data }
}

fn cat(parts: &[&Tensor], dim: usize, shape: Vec<usize>) -> Tensor {
    let outer: usize = numel(&shape[..dim]);
    let mut data = Vec::with_capacity(numel(&shape));
    for o in 0..outer {
        for part in parts {
            let chunk: usize = numel(&part.shape[dim..]);
            data.extend_from_slice(&part.data[o * chunk..(o + 1) * chunk]);
        }
    }
    Tensor { shape, data }
}

/// Checks the ids a call passes to embeddings straight from its inputs, before any kernel
/// runs: compiled kernels read ids unchecked (`graph::embedding_row` wraps them), and PyTorch
/// raises `IndexError` for an id outside the table. An input reaches an embedding "straight"
/// through reshapes, permutes and expands, which keep every element, so each of its values
/// is an id PyTorch would check; ids computed in the graph are not checked here.
pub fn check_embedding_ids(graph: &Graph, inputs: &[Tensor]) -> Result<(), EvalError> {
    for node in &graph.nodes {
        let Op::Embedding = node.op else { continue };
        let (Some(&ids), Some(&weight)) = (node.inputs.first(), node.inputs.get(1)) else {
            continue;
        };
        let mut source = graph.node(ids);
        while matches!(source.op, Op::Reshape | Op::Permute { .. } | Op::Expand) {
            source = graph.node(source.inputs[0]);
        }
        let position = graph.inputs.iter().position(|&input| input == source.id);
        let rows = graph.shape(weight).first().and_then(Expr::as_int);
        let (Some(position), Some(rows)) = (position, rows) else {
            continue;
        };
        let Some(tensor) = inputs.get(position) else {
            continue;
        };
        if let Some(&id) = tensor
            .data
            .iter()
            .find(|&&value| outside_table(value, rows as usize))
        {
            return Err(EvalError::IdOutOfRange {
                node: node.name.clone(),
                id,
                rows: rows as usize,
            });
        }
    }
    Ok(())
}

/// Whether an id (a whole number in its float32 carrier) picks no row of a `rows`-row table.
fn outside_table(id: f32, rows: usize) -> bool {
    id < 0.0 || id >= rows as f32
}

/// The rows of `weight` the ids pick; an id outside the table is PyTorch's IndexError.
fn embedding(
    node: &str,
    indices: &Tensor,
    weight: &Tensor,
    shape: Vec<usize>,
) -> Result<Tensor, EvalError> {
    let (rows, width) = (weight.shape[0], weight.shape[1]);
    let mut data = Vec::with_capacity(indices.len() * width);
    for &value in &indices.data {
        if outside_table(value, rows) {
            return Err(EvalError::IdOutOfRange {
                node: node.to_string(),
                id: value,
                rows,
            });
        }
        let row = value as usize;
        data.extend_from_slice(&weight.data[row * width..(row + 1) * width]);
    }
    Ok(Tensor { shape, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The convolution by its definition, one multiply-add at a time.
    fn conv_by_definition(
        x: &Tensor,
        weight: &Tensor,
        window: &Window,
        shape: &[usize],
    ) -> Vec<f32> {
        let (group_in, out_ch) = (weight.shape[1], weight.shape[0]);
        let group_out = out_ch / window.groups;
        let mut out = vec![0.0f32; numel(shape)];
        for (flat, value) in out.iter_mut().enumerate() {
            let index = unravel(flat, shape);
            let (n, o) = (index[0], index[1]);
            for c in 0..group_in {
                let channel = (o / group_out) * group_in + c;
                for q in 0..numel(&weight.shape[2..]) {
                    let k = unravel(q, &weight.shape[2..]);
                    let at: Option<Vec<usize>> = (0..k.len())
                        .map(|d| {
                            let pos = index[2 + d] as i64 * window.stride[d] - window.padding[d]
                                + k[d] as i64 * window.dilation[d];
                            usize::try_from(pos).ok().filter(|&p| p < x.shape[2 + d])
                        })
                        .collect();
                    if let Some(at) = at {
                        let mut x_index = vec![n, channel];
                        x_index.extend(at);
                        let mut w_index = vec![o, c];
                        w_index.extend(k);
                        *value += x.data[offset(&x_index, &strides(&x.shape))]
                            * weight.data[offset(&w_index, &strides(&weight.shape))];
                    }
                }
            }
        }
        out
    }

    fn filled(shape: Vec<usize>, scale: f32) -> Tensor {
        let data = (0..numel(&shape))
            .map(|i| ((i as f32) * scale).sin())
            .collect();
        Tensor { shape, data }
    }

    /// Columns and one product per chunk of output points give the definition's values,
    /// also where the scratch splits the points into chunks (a 64-channel 16×16 kernel:
    /// 16,384 rows, 64 points a chunk) and with groups, stride, padding and dilation.
    #[test]
    fn the_convolution_by_columns_is_the_definition() {
        let cases = [
            (
                vec![2, 64, 20, 20],
                vec![3, 64, 16, 16],
                [1, 1],
                [2, 2],
                [1, 1],
                1,
            ),
            (
                vec![1, 4, 9, 7],
                vec![6, 2, 3, 3],
                [2, 1],
                [1, 0],
                [1, 2],
                2,
            ),
        ];
        for (x_shape, w_shape, stride, padding, dilation, groups) in cases {
            let x = filled(x_shape.clone(), 0.37);
            let weight = filled(w_shape.clone(), 0.11);
            let window = Window {
                stride: &stride,
                padding: &padding,
                dilation: &dilation,
                groups,
            };
            let out_sizes: Vec<usize> = (0..2)
                .map(|d| {
                    let span = dilation[d] as usize * (w_shape[2 + d] - 1) + 1;
                    (x_shape[2 + d] + 2 * padding[d] as usize - span) / stride[d] as usize + 1
                })
                .collect();
            let shape = vec![x_shape[0], w_shape[0], out_sizes[0], out_sizes[1]];
            let got = conv(&x, &weight, None, &window, shape.clone());
            let expected = conv_by_definition(&x, &weight, &window, &shape);
            for (g, e) in got.data.iter().zip(&expected) {
                assert!(
                    (g - e).abs() <= 1e-3 * (1.0 + e.abs()),
                    "{g} vs {e} in {shape:?}"
                );
            }
        }
    }
}
