//! The numerics the IR's ops mean, shared by the reference interpreter (`eval.rs`), the CPU
//! backend and, spelled out in WGSL, the kernels: the error function, the random streams,
//! and the row-wise softmax, log-softmax and layer norm.
//!
//! In: floats and indices. Out: floats and indices. Invariant: each function is bit for bit
//! what its WGSL twin in `codegen` computes where the comment says so, and otherwise what
//! PyTorch's CPU kernel computes, so the backends can be checked against the reference.

use super::RandomKind;

/// The error function, Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below f32 noise here).
/// The WGSL `tailor_erf` and `gelu_erf` in `codegen` spell out the same polynomial.
pub(super) fn erf(x: f32) -> f32 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let y = 1.0 - poly * (-x * x).exp();
    if x >= 0.0 { y } else { -y }
}

/// PCG's output permutation as a hash (Jarzynski & Olano, "Hash Functions for GPU
/// Rendering", 2020): u32 arithmetic only, so WGSL computes the same bits.
pub fn pcg_hash(v: u32) -> u32 {
    let state = v.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// Element `index` of random stream `seed`: the hash of `index + seed` as a 24-bit
/// fraction in [0, 1), or for a normal, Box–Muller over that hash and its hash. The WGSL
/// helper `tailor_random` is this function.
pub fn random_value(kind: RandomKind, seed: u32, index: u32) -> f32 {
    const SCALE: f32 = 1.0 / 16_777_216.0;
    let a = pcg_hash(index.wrapping_add(seed));
    match kind {
        RandomKind::Unit => (a >> 8) as f32 * SCALE,
        RandomKind::Normal => {
            let b = pcg_hash(a);
            let u1 = 1.0 - (a >> 8) as f32 * SCALE;
            let u2 = (b >> 8) as f32 * SCALE;
            (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
        }
    }
}

/// Softmax of one row in place: `exp(x - max) / sum(exp(x - max))`, each exponential
/// computed once and summed in order.
pub fn softmax_row(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut total = 0.0f32;
    for x in row.iter_mut() {
        *x = (*x - max).exp();
        total += *x;
    }
    for x in row.iter_mut() {
        *x /= total;
    }
}

/// Log-softmax of one row in place: `x - max - log(sum(exp(x - max)))`, the stable form
/// PyTorch computes (no `log` of a quotient, so no `log(0)` where softmax underflows).
pub fn log_softmax_row(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let total: f32 = row.iter().map(|&x| (x - max).exp()).sum();
    let log_total = total.ln();
    for x in row.iter_mut() {
        *x = *x - max - log_total;
    }
}

/// Layer normalisation of one row in place, without the affine part: `(x - mean) /
/// sqrt(var + eps)` with the biased variance, as `nn.LayerNorm` computes it.
pub fn layer_norm_row(row: &mut [f32], eps: f32) {
    let len = row.len() as f32;
    let mean = row.iter().sum::<f32>() / len;
    let var = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / len;
    let inv = 1.0 / (var + eps).sqrt();
    for x in row.iter_mut() {
        *x = (*x - mean) * inv;
    }
}

/// The input position PyTorch's nearest-neighbour resize of `input` positions to `output`
/// reads at output position `position` (`nearest_idx` in its CPU and CUDA kernels): the scale
/// `input / output` and its product with the position each rounded to float32, floored,
/// and clamped to the last position. Lowering computes the same through
/// `Expr::nearest_source`.
pub fn nearest_source(position: usize, input: usize, output: usize) -> usize {
    let scale = input as f32 / output as f32;
    ((position as f32 * scale).floor() as usize).min(input.saturating_sub(1))
}

/// The table row a compiled `nn.Embedding` kernel reads for an id held as float32: truncated
/// and wrapped into the table's `rows` (kernels check no ids; the reference refuses an id
/// outside the table, as PyTorch does).
pub fn embedding_row(index: f32, rows: usize) -> usize {
    (index.abs() as usize) % rows.max(1)
}
