//! Strides: where each element of a view lies in its base's memory, and PyTorch's choice
//! between a view and a copy for `reshape` and `view`.
//!
//! Input: a tensor's symbolic sizes and strides, and a target shape whose `-1` has already
//! been inferred (`rules::reshape`). Output: the strides of the view, or `None` where no
//! view exists (`reshape` then copies, `view` raises `ShapeError::NotViewable`).
//! Invariant: every decision on sizes goes through `ShapeEnv::evaluate` in the order
//! PyTorch 2.15 asks it — ATen's `computeStride`, `torch._refs._reshape_view_helper` and
//! `torch._prims_common.is_contiguous` — so a capture records the guards PyTorch records
//! (`(s0*s1) % 4 == 0` is `rules::reshape`'s; `((s0*s1)//4) != s0` and the rest are these).

use super::{Origin, ShapeEnv};
use crate::graph::Shape;
use crate::symbolic::{CmpOp, Expr, Rel, Sym, ValueRange};

/// Product of sizes.
pub fn numel(shape: &[Expr]) -> Expr {
    shape.iter().fold(Expr::int(1), |acc, d| &acc * d)
}

/// The strides of a fresh tensor of `shape`: row-major, the last dim's stride 1.
pub fn contiguous(shape: &[Expr]) -> Shape {
    let mut strides = vec![Expr::int(1); shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = &strides[d + 1] * &shape[d + 1];
    }
    strides
}

/// Decides `lhs op rhs` for these sizes: a guard unless PyTorch knows it statically.
fn ask(env: &mut ShapeEnv, origin: &Origin, lhs: &Expr, op: CmpOp, rhs: &Expr) -> bool {
    let (lhs, rhs) = (env.replace(lhs), env.replace(rhs));
    // `4 == size` in Python is `size.__eq__(4)`: the symbolic side comes first.
    let rel = if lhs.as_int().is_some() && rhs.as_int().is_none() {
        Rel::new(rhs, op.swap(), lhs)
    } else {
        Rel::new(lhs, op, rhs)
    };
    // Decided without a guard (PyTorch's "statically known"): no event either, so views
    // that ask only such questions leave the trace as it was.
    match statically_known(env, &rel) {
        Some(known) => known,
        None => env.evaluate(&rel, origin),
    }
}

/// What PyTorch's `_maybe_evaluate_static` knows without a guard: the ranges decide `rel`,
/// or they do once every symbol is written as its lower bound plus a new symbol from 0
/// (`s0*s1 != s0` is `(2+a)*(2+b) != 2+a`, `2 + a + 2b + ab != 0`: every term positive).
fn statically_known(env: &ShapeEnv, rel: &Rel) -> Option<bool> {
    let ranges = |s| env.range(s);
    if let Some(known) = rel.simplify().decide_by_ranges(&ranges) {
        return Some(known);
    }
    let syms = rel.free_syms();
    // The shifted symbols are numbered past every symbol of the environment.
    let first = env.symbols().len() as u32;
    let mut shifted = rel.clone();
    let mut lower = std::collections::BTreeMap::new();
    for (i, sym) in syms.iter().enumerate() {
        let lo = env.range(*sym).lo?;
        let fresh = Sym(first + i as u32);
        let value = &Expr::sym(fresh) + lo;
        shifted = Rel::new(
            shifted.lhs.substitute(*sym, &value),
            shifted.op,
            shifted.rhs.substitute(*sym, &value),
        );
        lower.insert(fresh, env.range(*sym).hi.map(|hi| hi - lo));
    }
    shifted
        .simplify()
        .decide_by_ranges(&|s| match lower.get(&s) {
            Some(hi) => ValueRange::new(Some(0), *hi),
            None => env.range(s),
        })
}

/// `torch._prims_common.is_contiguous`: fewer than 2 elements, or every dim that is not 1
/// strided by the product of the sizes after it. (PyTorch also accepts the strides of
/// `Max(size, 1)`, which differ only where a size is 0, i.e. where there are no elements.)
pub fn is_contiguous(
    env: &mut ShapeEnv,
    origin: &Origin,
    shape: &[Expr],
    strides: &[Expr],
) -> bool {
    let numel = numel(shape);
    if ask(env, origin, &numel, CmpOp::Lt, &Expr::int(2)) {
        return true;
    }
    let mut expected = Expr::int(1);
    for (size, stride) in shape.iter().zip(strides).rev() {
        if ask(env, origin, size, CmpOp::Eq, &Expr::int(1)) {
            continue;
        }
        if ask(env, origin, stride, CmpOp::Ne, &expected) {
            return false;
        }
        expected = &expected * size;
    }
    true
}

/// ATen's `computeStride`: the strides that let `new_shape` view memory laid out as
/// `old_shape`/`old_strides`, or `None` when a dim of `new_shape` would span two chunks of
/// contiguous memory. Asked right to left, chunk by chunk, as `reshape` asks it.
pub fn compute_stride(
    env: &mut ShapeEnv,
    origin: &Origin,
    old_shape: &[Expr],
    old_strides: &[Expr],
    new_shape: &[Expr],
) -> Option<Shape> {
    let Some(last_stride) = old_strides.last() else {
        return Some(vec![Expr::int(1); new_shape.len()]);
    };
    let numel = numel(old_shape);
    if ask(env, origin, &numel, CmpOp::Eq, &Expr::int(0)) {
        return Some(contiguous(new_shape));
    }
    let one = Expr::int(1);
    let mut new_strides = vec![Expr::int(0); new_shape.len()];
    let mut view_d = new_shape.len() as isize - 1;
    let mut chunk_base_stride = last_stride.clone();
    let mut tensor_numel = Expr::int(1);
    let mut view_numel = Expr::int(1);
    for tensor_d in (0..old_shape.len()).rev() {
        tensor_numel = &tensor_numel * &old_shape[tensor_d];
        let chunk_ends = tensor_d == 0 || {
            let base = &tensor_numel * &chunk_base_stride;
            ask(env, origin, &old_shape[tensor_d - 1], CmpOp::Ne, &one)
                && ask(env, origin, &old_strides[tensor_d - 1], CmpOp::Ne, &base)
        };
        if !chunk_ends {
            continue;
        }
        while view_d >= 0 {
            let size = &new_shape[view_d as usize];
            let takes = ask(env, origin, &view_numel, CmpOp::Lt, &tensor_numel)
                || ask(env, origin, size, CmpOp::Eq, &one);
            if !takes {
                break;
            }
            new_strides[view_d as usize] = &view_numel * &chunk_base_stride;
            view_numel = &view_numel * size;
            view_d -= 1;
        }
        if ask(env, origin, &view_numel, CmpOp::Ne, &tensor_numel) {
            return None;
        }
        if tensor_d > 0 {
            chunk_base_stride = old_strides[tensor_d - 1].clone();
            tensor_numel = Expr::int(1);
            view_numel = Expr::int(1);
        }
    }
    (view_d == -1).then_some(new_strides)
}

/// A tensor's sizes and strides while `view` rebuilds it dim by dim.
struct Layout {
    shape: Shape,
    strides: Shape,
}

/// `torch._refs._reshape_view_helper` (`allow_copy=False`) after `infer_size`: the strides
/// of `target` as a view of `shape`/`strides`, or `None` when dims that must merge are not
/// adjacent in memory. `exact` is `(numel, known)` when the target's `-1` was inferred as
/// `numel // known` and `numel % known == 0` is known, which PyTorch's symbolic division
/// then uses (`numel // (numel // 4)` is 4, no guard).
pub fn view(
    env: &mut ShapeEnv,
    origin: &Origin,
    shape: &[Expr],
    strides: &[Expr],
    target: &[Expr],
    exact: Option<(&Expr, &Expr)>,
) -> Option<Shape> {
    let numel = numel(shape);
    if ask(env, origin, &numel, CmpOp::Eq, &Expr::int(0)) {
        return Some(contiguous(target));
    }
    if shape.is_empty() || target.is_empty() {
        // Only size-1 dims come or go (infer_size saw the element counts agree).
        return Some(contiguous(target));
    }
    if is_contiguous(env, origin, shape, strides) {
        // PyTorch's two special cases: flattening to 1-d and unflattening 1-d to 2-d.
        if target.len() == 1 && shape.len() > 1 {
            return Some(vec![Expr::int(1)]);
        }
        if target.len() == 2 && shape.len() == 1 {
            return Some(vec![target[1].clone(), Expr::int(1)]);
        }
    }
    // PyTorch checks `numel == prod(target)` here; `infer_size` has already checked it, so
    // it is decided (or, through an inferred `-1`, recorded and then dropped from the final
    // guards as implied by the divisibility PyTorch learnt).
    let mut a = Layout {
        shape: shape.to_vec(),
        strides: strides.to_vec(),
    };
    let mut idx = 0;
    for length in target {
        if idx >= a.shape.len() {
            // A trailing 1: split the last dim into itself and 1.
            let last = a.shape.len() - 1;
            let size = a.shape[last].clone();
            split_dim(env, origin, &mut a, last, &size, exact);
            idx += 1;
            continue;
        }
        if ask(env, origin, length, CmpOp::Eq, &a.shape[idx]) {
            idx += 1;
            continue;
        }
        let mut accum = a.shape[idx].clone();
        let mut end = idx;
        while ask(env, origin, &accum.modulo(length), CmpOp::Ne, &Expr::int(0)) {
            // `infer_size` saw the element counts agree, so the dims run out only on a
            // shape no view can give.
            end += 1;
            accum = &accum * a.shape.get(end)?;
        }
        if end != idx {
            collapse(env, origin, &mut a, idx, end)?;
        }
        if ask(env, origin, &accum, CmpOp::Ne, length) {
            split_dim(env, origin, &mut a, idx, length, exact);
        }
        idx += 1;
    }
    // A trailing 1 of the tensor that the target drops.
    while idx < a.shape.len() {
        a.shape.remove(idx);
        a.strides.remove(idx);
    }
    Some(a.strides)
}

/// `prims.split_dim`: dim `d` becomes `outer` and `size // outer`, strided within it.
fn split_dim(
    env: &mut ShapeEnv,
    origin: &Origin,
    a: &mut Layout,
    d: usize,
    outer: &Expr,
    exact: Option<(&Expr, &Expr)>,
) {
    let size = a.shape[d].clone();
    // PyTorch checks the split leaves no remainder (already decided by the caller's loop).
    ask(env, origin, &size.modulo(outer), CmpOp::Eq, &Expr::int(0));
    let inner = quotient(env, &size, outer, exact);
    let stride = a.strides[d].clone();
    a.shape[d] = outer.clone();
    a.shape.insert(d + 1, inner.clone());
    a.strides[d] = &stride * &inner;
    a.strides.insert(d + 1, stride);
}

/// `size // outer`, using a known exact division `numel / known` the way PyTorch's
/// `ShapeEnv` does once `numel % known == 0` is a guard: `(numel*m) // (numel // known)`
/// is `known*m`.
///
/// Likewise `a // (a // k)` is `k` once `a % k == 0` is known (a dim that einops split in
/// parts of `k`, `s2 // (s2//2)`), as PyTorch's `ShapeEnv.simplify` rewrites it.
fn quotient(env: &ShapeEnv, size: &Expr, outer: &Expr, exact: Option<(&Expr, &Expr)>) -> Expr {
    if let (Some(whole), Some(part)) = (env.hint(size), env.hint(outer))
        && part > 0
        && whole % part == 0
        && outer.as_int().is_none()
    {
        let k = Expr::int(whole / part);
        if env.replace(&size.floor_div(&k)) == env.replace(outer)
            && env.is_known(&Rel::new(size.modulo(&k), CmpOp::Eq, Expr::int(0)))
        {
            return k;
        }
    }
    if let Some((numel, known)) = exact {
        let (numel, known) = (env.replace(numel), env.replace(known));
        if env.replace(outer) == env.replace(&numel.floor_div(&known))
            && let Some(m) = env.replace(size).divide_exact(&numel)
        {
            return env.replace(&(&known * &m));
        }
    }
    env.replace(&size.floor_div(outer))
}

/// `prims._collapse_view_helper` and `collapse_view`: dims `start..=end` merge into one if
/// each is strided by the next's extent (or one of a pair is 1); else `None`.
fn collapse(
    env: &mut ShapeEnv,
    origin: &Origin,
    a: &mut Layout,
    start: usize,
    end: usize,
) -> Option<()> {
    let one = Expr::int(1);
    // PyTorch builds one symbolic `and` of `or`s and asks it once; each part is asked here
    // in its order, which records the same guard whenever a single part is undecided.
    for d in (start..end).rev() {
        let merges = ask(env, origin, &a.shape[d], CmpOp::Eq, &one)
            || ask(env, origin, &a.shape[d + 1], CmpOp::Eq, &one)
            || ask(
                env,
                origin,
                &a.strides[d],
                CmpOp::Eq,
                &(&a.strides[d + 1] * &a.shape[d + 1]),
            );
        if !merges {
            return None;
        }
    }
    let mut stride = a.strides[end].clone();
    let mut length = a.shape[end].clone();
    for d in (start..end).rev() {
        if ask(env, origin, &a.shape[d], CmpOp::Ne, &one)
            && ask(env, origin, &a.strides[d], CmpOp::Lt, &stride)
        {
            stride = a.strides[d].clone();
        }
        length = &length * &a.shape[d];
    }
    a.shape.splice(start..=end, [env.replace(&length)]);
    a.strides.splice(start..=end, [env.replace(&stride)]);
    Some(())
}
