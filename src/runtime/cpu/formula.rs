//! Index formulas bound to one call's sizes and cut into runs along one index variable,
//! over which each formula is a start plus a constant stride.
//!
//! In: a kernel's formulas (offsets, mask bounds, sizes used as numbers) with the call's
//! shape symbols and derived sizes already replaced by numbers, and the extents of its
//! index variables. Out: an `Axis` (the variable the values run along, and the `period`
//! its runs are aligned to) and one `Strided` per formula: `rest(other variables) +
//! stride * j` at position `j` of a run. Invariant: that form equals the formula at every
//! position of every run — `Expr::affine_in` proves it — so a run reads memory with one
//! evaluation per formula and a stride, never by interpreting the formula per element.
//! Where no period makes a formula affine (a `Min` of an index, say) the period is 1 and
//! `rest` is the whole formula, evaluated once per element: slow, but exactly the formula.

use super::super::RunError;
use crate::lower::MAX_VARS;
use crate::symbolic::{CompiledExpr, Expr, Sym, ValueRange};
use std::ops::Range;

/// Values computed per block: enough to amortise a formula evaluation and a dispatch, few
/// enough that a block program's stack stays in the first-level cache.
pub(super) const BLOCK: usize = 256;

/// One kernel's index variables in this call: their symbols and extents.
#[derive(Clone, Debug)]
pub(super) struct Vars {
    first_index_sym: u32,
    /// Values each variable takes, `0..extent`.
    pub extents: [i64; MAX_VARS],
}

impl Vars {
    /// The variables of a kernel whose variable `v` runs over `0..extents[v]`.
    pub fn new(first_index_sym: u32, extents: &[i64]) -> Vars {
        let mut all = [1; MAX_VARS];
        all[..extents.len()].copy_from_slice(extents);
        Vars {
            first_index_sym,
            extents: all,
        }
    }

    fn sym(&self, var: usize) -> Sym {
        Sym(self.first_index_sym + var as u32)
    }

    /// The position inside a run; free once derived sizes are replaced by numbers.
    fn inner(&self) -> Sym {
        Sym(self.first_index_sym + MAX_VARS as u32)
    }

    /// Length of the slot array formulas read (every variable's slot included).
    pub fn slot_count(&self) -> usize {
        self.first_index_sym as usize + MAX_VARS
    }

    /// A zeroed slot array.
    pub fn slots(&self) -> Vec<i64> {
        vec![0; self.slot_count()]
    }

    /// The slot of variable `var`.
    pub fn slot(&self, var: usize) -> usize {
        self.first_index_sym as usize + var
    }
}

/// The variable a part's values run along, cut into runs of `period` values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Axis {
    /// The index variable.
    pub var: usize,
    /// Runs are `[p*period, (p+1)*period)`; inside one, every formula is affine.
    pub period: i64,
}

impl Axis {
    /// `along <variable> (runs of <period>)`, naming variables by `names`.
    #[cfg(test)]
    pub fn describe(&self, names: &[&str]) -> String {
        format!("along {} (runs of {})", names[self.var], self.period)
    }
}

/// `rest + stride * j` at position `j` of a run.
#[derive(Clone, Debug)]
pub(super) struct Strided {
    /// Change per step along the axis.
    pub stride: i64,
    rest: Rest,
}

/// The start of a run, from the slots.
#[derive(Clone, Debug)]
enum Rest {
    Const(i64),
    /// `outer(other variables) + per_run * run number`: consecutive runs under the same
    /// outer values differ by `per_run`, so `outer` is evaluated once for all of them.
    ByRun {
        outer: CompiledExpr,
        per_run: i64,
        run_slot: usize,
    },
    /// Anything else, evaluated per run.
    Formula(CompiledExpr),
}

fn evaluated(formula: &CompiledExpr, slots: &[i64]) -> Result<i64, RunError> {
    formula.eval(slots).ok_or_else(|| RunError::Size {
        what: "an index".into(),
        expr: "a kernel formula".into(),
    })
}

impl Strided {
    /// The part of the start that does not change from run to run while the variables
    /// other than the axis keep their values in `slots` (0 where there is none).
    pub fn outer(&self, slots: &[i64]) -> Result<i64, RunError> {
        match &self.rest {
            Rest::ByRun { outer, .. } => evaluated(outer, slots),
            Rest::Const(_) | Rest::Formula(_) => Ok(0),
        }
    }

    /// The formula at position 0 of the run described by `slots` (the axis variable's slot
    /// holds the run number, the other variables their values), `outer` from
    /// [`Strided::outer`] at the same outer values.
    pub fn start_with(&self, outer: i64, slots: &[i64]) -> Result<i64, RunError> {
        match &self.rest {
            Rest::Const(value) => Ok(*value),
            Rest::ByRun {
                per_run, run_slot, ..
            } => Ok(outer.saturating_add(per_run.saturating_mul(slots[*run_slot]))),
            Rest::Formula(formula) => evaluated(formula, slots),
        }
    }

    /// The formula at position 0 of the run described by `slots`.
    pub fn start(&self, slots: &[i64]) -> Result<i64, RunError> {
        self.start_with(self.outer(slots)?, slots)
    }

    /// A formula evaluated whole per run.
    fn whole(stride: i64, rest: &Expr) -> Strided {
        let rest = match rest.as_int() {
            Some(value) => Rest::Const(value),
            None => Rest::Formula(CompiledExpr::new(rest)),
        };
        Strided { stride, rest }
    }

    /// A formula whose rest may be affine in the run number `run` (at slot `run_slot`).
    fn new(
        stride: i64,
        rest: &Expr,
        run: (Sym, usize),
        ranges: &dyn Fn(Sym) -> ValueRange,
    ) -> Strided {
        match rest.affine_in(run.0, ranges) {
            Some((per_run, outer)) if rest.as_int().is_none() => Strided {
                stride,
                rest: Rest::ByRun {
                    outer: CompiledExpr::new(&outer),
                    per_run,
                    run_slot: run.1,
                },
            },
            _ => Strided::whole(stride, rest),
        }
    }
}

/// One run: `len` values of the axis variable from `value`, at positions `first..` of run
/// number `number`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    /// The run number (what the axis variable's slot holds).
    pub number: i64,
    /// Position of the first value inside the run.
    pub first: i64,
    /// Values in this run.
    pub len: usize,
    /// The axis variable's first value.
    pub value: i64,
}

/// Calls `f` for each run covering `values` of the axis variable, in order.
pub(super) fn for_each_run(
    axis: Axis,
    values: Range<i64>,
    mut f: impl FnMut(Run) -> Result<(), RunError>,
) -> Result<(), RunError> {
    let mut value = values.start;
    while value < values.end {
        let (number, first) = (value / axis.period, value % axis.period);
        let len = (axis.period - first).min(values.end - value);
        f(Run {
            number,
            first,
            len: len as usize,
            value,
        })?;
        value += len;
    }
    Ok(())
}

/// Calls `f(first, len)` for the blocks of at most `BLOCK` positions covering a run.
pub(super) fn for_each_block(
    run: Run,
    mut f: impl FnMut(i64, usize) -> Result<(), RunError>,
) -> Result<(), RunError> {
    let mut done = 0;
    while done < run.len {
        let len = BLOCK.min(run.len - done);
        f(run.first + done as i64, len)?;
        done += len;
    }
    Ok(())
}

/// Splits every formula along `var`: the longest period (the whole extent first, then the
/// divisors the formulas apply to `var`) over which all of them are affine, else 1.
pub(super) fn split_along(exprs: &[Expr], var: usize, vars: &Vars) -> (Axis, Vec<Strided>) {
    let extent = vars.extents[var];
    let mut periods: Vec<i64> = exprs
        .iter()
        .flat_map(|expr| expr.periods_of(vars.sym(var)))
        .filter(|&p| p > 1 && p < extent)
        .collect();
    periods.sort_unstable_by(|a, b| b.cmp(a));
    periods.dedup();
    for period in std::iter::once(extent.max(1)).chain(periods) {
        if let Some(split) = split_with_period(exprs, var, period, vars) {
            return (Axis { var, period }, split);
        }
    }
    let whole = exprs.iter().map(|expr| Strided::whole(0, expr)).collect();
    (Axis { var, period: 1 }, whole)
}

/// Every formula as `rest(run number, other variables) + stride * position` when `var =
/// period * run number + position`, or `None` if one of them is not affine in the position.
fn split_with_period(exprs: &[Expr], var: usize, period: i64, vars: &Vars) -> Option<Vec<Strided>> {
    let (ranges, position) = split_ranges(var, period, vars);
    let (sym, inner) = (vars.sym(var), vars.inner());
    exprs
        .iter()
        .map(|expr| {
            let split = expr.substitute_with(&|s| (s == sym).then(|| position.clone()));
            let (stride, rest) = split.affine_in(inner, &ranges)?;
            Some(Strided::new(stride, &rest, (sym, vars.slot(var)), &ranges))
        })
        .collect()
}

/// `expr` as a strided matrix over variables `rows` and `cols`: `base + row_stride * r +
/// col_stride * c` inside each run of `rows` (runs of the whole extent unless `split_rows`
/// allows shorter ones), both strides non-negative as a matrix view needs; else `None`.
pub(super) fn matrix_view(
    expr: &Expr,
    rows: usize,
    cols: usize,
    vars: &Vars,
    split_rows: bool,
) -> Option<(Axis, i64, i64, Strided)> {
    let extent = vars.extents[rows];
    let mut periods = vec![extent.max(1)];
    if split_rows {
        let mut divisors: Vec<i64> = expr
            .periods_of(vars.sym(rows))
            .into_iter()
            .filter(|&p| p > 1 && p < extent)
            .collect();
        divisors.reverse();
        periods.extend(divisors);
    }
    periods.into_iter().find_map(|period| {
        let (ranges, position) = split_ranges(rows, period, vars);
        let (sym, inner) = (vars.sym(rows), vars.inner());
        let split = expr.substitute_with(&|s| (s == sym).then(|| position.clone()));
        let (row_stride, rest) = split.affine_in(inner, &ranges)?;
        let (col_stride, base) = rest.affine_in(vars.sym(cols), &ranges)?;
        (row_stride >= 0 && col_stride >= 0).then(|| {
            let axis = Axis { var: rows, period };
            (axis, row_stride, col_stride, Strided::whole(0, &base))
        })
    })
}

/// The ranges of every variable when `var = period * run + position`, and that sum.
fn split_ranges(var: usize, period: i64, vars: &Vars) -> (impl Fn(Sym) -> ValueRange, Expr) {
    let (sym, inner) = (vars.sym(var), vars.inner());
    let runs = (vars.extents[var] + period - 1) / period;
    let extents = vars.extents;
    let first = vars.first_index_sym;
    let ranges = move |s: Sym| {
        if s == inner {
            return ValueRange::new(Some(0), Some(period - 1));
        }
        if s == sym {
            return ValueRange::new(Some(0), Some((runs - 1).max(0)));
        }
        match s.0.checked_sub(first).map(|v| v as usize) {
            Some(v) if v < MAX_VARS => ValueRange::new(Some(0), Some((extents[v] - 1).max(0))),
            _ => ValueRange::unbounded(),
        }
    };
    (ranges, Expr::sym(sym) * period + Expr::sym(inner))
}

/// The positions `j` in `0..len` where `0 <= value(j) < limit(j)`, both affine in `j`
/// (`value(j) = value_start + value_stride * j`, likewise `limit`): one interval, because
/// each condition holds on a prefix or a suffix.
pub(super) fn inside(value: (i64, i64), limit: (i64, i64), len: usize) -> Range<usize> {
    // 0 <= v0 + dv*j, and v0 + dv*j < l0 + dl*j, i.e. (l0 - v0 - 1) + (dl - dv)*j >= 0.
    let (v0, dv) = value;
    let (l0, dl) = limit;
    let len = len as i64;
    let (lo1, hi1) = non_negative(v0, dv, len);
    let (Some(c), Some(d)) = (
        l0.checked_sub(v0).and_then(|c| c.checked_sub(1)),
        dl.checked_sub(dv),
    ) else {
        return inside_wide(value, limit, len as usize);
    };
    let (lo2, hi2) = non_negative(c, d, len);
    let (lo, hi) = (lo1.max(lo2), hi1.min(hi2));
    if lo >= hi {
        return 0..0;
    }
    lo as usize..hi as usize
}

/// [`inside`] in 128 bits, for a limit and a value too far apart for 64.
fn inside_wide(value: (i64, i64), limit: (i64, i64), len: usize) -> Range<usize> {
    let len = len as i128;
    let solve = |c: i128, d: i128| -> (i128, i128) {
        match d {
            0 if c >= 0 => (0, len),
            0 => (0, 0),
            d if d > 0 => (
                (-c).div_euclid(d) + i128::from((-c).rem_euclid(d) != 0),
                len,
            ),
            d => (0, len.min(c.div_euclid(-d) + 1)),
        }
    };
    let (v0, dv) = (i128::from(value.0), i128::from(value.1));
    let (l0, dl) = (i128::from(limit.0), i128::from(limit.1));
    let (lo1, hi1) = solve(v0, dv);
    let (lo2, hi2) = solve(l0 - v0 - 1, dl - dv);
    let (lo, hi) = (lo1.max(lo2).max(0), hi1.min(hi2).min(len));
    if lo >= hi {
        return 0..0;
    }
    lo as usize..hi as usize
}

/// The `j` in `0..len` with `c + d*j >= 0`, as `[lo, hi)` (clamped to `0..len`).
fn non_negative(c: i64, d: i64, len: i64) -> (i64, i64) {
    match d {
        0 if c >= 0 => (0, len),
        0 => (0, 0),
        // j >= ceil(-c / d); c = i64::MIN needs a j beyond any run.
        d if d > 0 => {
            let lo = c.checked_neg().map_or(i64::MAX, |minus_c| {
                minus_c.div_euclid(d) + i64::from(minus_c.rem_euclid(d) != 0)
            });
            (lo.clamp(0, len), len)
        }
        // j <= floor(c / -d); d = i64::MIN allows only j = 0, and only for c >= 0.
        d => {
            let hi = d.checked_neg().map_or(i64::from(c >= 0), |minus_d| {
                c.div_euclid(minus_d).saturating_add(1)
            });
            (0, hi.clamp(0, len))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_solves_both_conditions() {
        // 2j - 1 in [0, 7): j in [1, 4).
        assert_eq!(inside((-1, 2), (7, 0), 10), 1..4);
        // 5 - j in [0, 3): j in [3, 6).
        assert_eq!(inside((5, -1), (3, 0), 10), 3..6);
        assert_eq!(inside((3, 0), (3, 0), 10), 0..0);
        assert_eq!(inside((0, 1), (100, 0), 10), 0..10);
        assert_eq!(inside((i64::MIN, 1), (i64::MAX, 0), 10), 0..0);
        assert_eq!(inside((5, 0), (i64::MAX, -1), 10), 0..10);
        for (v, dv, l, dl) in [(-3, 1, 4, 0), (2, -1, 5, 1), (7, 3, 20, 1), (-9, 4, 3, 2)] {
            let got = inside((v, dv), (l, dl), 12);
            for j in 0..12i64 {
                let x = v + dv * j;
                assert_eq!(
                    got.contains(&(j as usize)),
                    0 <= x && x < l + dl * j,
                    "{v} {dv} {l} {dl} at {j}"
                );
            }
        }
    }

    #[test]
    fn runs_cover_the_values_in_order() {
        let axis = Axis { var: 0, period: 5 };
        let mut runs = Vec::new();
        for_each_run(axis, 3..13, |run| {
            runs.push((run.number, run.first, run.len, run.value));
            Ok(())
        })
        .expect("no error");
        assert_eq!(runs, [(0, 3, 2, 3), (1, 0, 5, 5), (2, 0, 3, 10)]);
    }

    #[test]
    fn an_unravelled_read_splits_at_the_row_length() {
        // gid over [4, 6] read transposed: offset = (gid % 6) * 4 + gid // 6.
        let vars = Vars::new(2, &[24]);
        let gid = Expr::sym(Sym(2));
        let six = Expr::int(6);
        let offset = gid.modulo(&six) * 4 + gid.floor_div(&six);
        let (axis, split) = split_along(&[offset.clone(), gid.clone()], 0, &vars);
        assert_eq!(axis, Axis { var: 0, period: 6 });
        assert_eq!((split[0].stride, split[1].stride), (4, 1));
        let mut slots = vars.slots();
        for value in 0..24 {
            slots[vars.slot(0)] = value / 6;
            let bindings = [(Sym(2), value)].into_iter().collect();
            let expected = offset.eval(&bindings).expect("defined");
            assert_eq!(
                split[0].start(&slots).expect("defined") + 4 * (value % 6),
                expected
            );
        }
    }
}
