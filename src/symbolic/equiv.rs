//! Equivalence of two expressions over symbol ranges, used to grade a learner's typed answer
//! against the compiler's formula.
//!
//! In: two canonical expressions and each symbol's range. Out: whether they agree.
//!
//! Invariant: deterministic, and `false` only with a concrete counterexample. `true` comes
//! from equal canonical forms (with or without the ranges) or, failing that, from agreeing
//! at every sample binding — strong evidence, not proof, beyond the canonical check.

use std::collections::BTreeSet;

use super::{Bindings, Expr, Sym, ValueRange};

/// At most this many bindings are tried; per-symbol sample counts shrink as symbols are
/// added so the full grid stays under it (64, 64², 16³, 8⁴).
const MAX_SAMPLES: usize = 4096;

/// Symbols beyond this many are sampled pseudo-randomly instead of on a full grid.
const GRID_SYMBOLS: usize = 4;

/// See [`Expr::is_equivalent`].
pub(super) fn is_equivalent(a: &Expr, b: &Expr, ranges: &dyn Fn(Sym) -> ValueRange) -> bool {
    if a == b || a.simplify_in(ranges) == b.simplify_in(ranges) {
        return true;
    }
    let mut syms = a.free_syms();
    syms.extend(b.free_syms());
    let syms: Vec<Sym> = syms.into_iter().collect();
    let per_symbol = match syms.len() {
        0..=2 => 64,
        3 => 16,
        _ => 8,
    };
    let candidates: Vec<Vec<i64>> = syms
        .iter()
        .map(|sym| sample_values(ranges(*sym), per_symbol))
        .collect();
    if candidates.iter().any(Vec::is_empty) {
        // An empty range has no bindings to disagree on.
        return true;
    }
    let agrees = |choice: &[usize]| {
        let bindings: Bindings = syms
            .iter()
            .zip(choice)
            .zip(&candidates)
            .map(|((sym, index), values)| (*sym, values[*index]))
            .collect();
        a.eval(&bindings) == b.eval(&bindings)
    };
    if syms.len() <= GRID_SYMBOLS {
        grid(&candidates).all(|choice| agrees(&choice))
    } else {
        pseudo_random(&candidates).all(|choice| agrees(&choice))
    }
}

/// Every combination of one index per symbol (odometer order).
fn grid(candidates: &[Vec<i64>]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let total: usize = candidates.iter().map(Vec::len).product();
    (0..total).map(move |mut number| {
        candidates
            .iter()
            .map(|values| {
                let index = number % values.len();
                number /= values.len();
                index
            })
            .collect()
    })
}

/// `MAX_SAMPLES` combinations from a fixed-seed linear congruential generator, so results
/// are reproducible.
fn pseudo_random(candidates: &[Vec<i64>]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..MAX_SAMPLES).map(move |_| {
        candidates
            .iter()
            .map(|values| {
                // Knuth's MMIX constants; the high bits are the well-mixed ones.
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((state >> 33) as usize) % values.len()
            })
            .collect()
    })
}

/// Samples stay within this magnitude so that evaluating a formula (products, small powers)
/// cannot overflow and turn a true equivalence into a spurious `None` mismatch; range ends
/// beyond it are not sampled.
const MAX_SAMPLE_MAGNITUDE: i64 = 1 << 20;

/// Up to `limit` values from `range`, most telling first: the range ends and their
/// neighbours (where off-by-one and parity differences show), small values, then a spread
/// of larger ones including powers of two and their neighbours.
fn sample_values(range: ValueRange, limit: usize) -> Vec<i64> {
    let from_lo = |k: i64| range.lo.and_then(|lo| lo.checked_add(k));
    let from_hi = |k: i64| range.hi.and_then(|hi| hi.checked_sub(k));
    let mut ordered: Vec<i64> = [from_lo(0), from_hi(0), from_lo(1), from_hi(1), from_lo(2)]
        .into_iter()
        .flatten()
        .collect();
    ordered.extend([0, 1, 2, -1, 3, -2, 4, 5, -3, 6, 7, -4, 8, -5, 9, -7]);
    for k in [
        3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 255,
        256, 999, 1000, 1023, 1024,
    ] {
        ordered.extend(from_lo(k));
        ordered.extend([k, -k]);
    }
    let mut seen = BTreeSet::new();
    ordered
        .into_iter()
        .filter(|v| range.contains(*v) && v.abs() <= MAX_SAMPLE_MAGNITUDE && seen.insert(*v))
        .take(limit)
        .collect()
}
