//! Tests of the affine views (`Expr::affine_in`, `Expr::periods_of`): the index formulas
//! lowering writes (unravelled positions, strided windows, slices), split into a stride and
//! a rest, checked against direct evaluation at every value of the symbol's range.

use super::super::*;

fn s(n: u32) -> Expr {
    Expr::sym(Sym(n))
}

/// Symbol 0 in `[0, hi0]`, symbol 1 in `[0, hi1]`, the others unbounded.
fn ranges(hi0: i64, hi1: i64) -> impl Fn(Sym) -> ValueRange {
    move |sym| match sym.0 {
        0 => ValueRange::new(Some(0), Some(hi0)),
        1 => ValueRange::new(Some(0), Some(hi1)),
        _ => ValueRange::unbounded(),
    }
}

/// Splits `expr` in `s0` and checks `coeff * s0 + rest` against `expr` over the ranges.
#[track_caller]
fn check_affine(expr: &Expr, hi0: i64, hi1: i64) -> (i64, Expr) {
    let ranges = ranges(hi0, hi1);
    let (coeff, rest) = expr
        .affine_in(Sym(0), &ranges)
        .unwrap_or_else(|| panic!("{expr} should be affine in s0"));
    assert!(!rest.mentions(Sym(0)), "{rest} still mentions s0");
    for v0 in 0..=hi0 {
        for v1 in 0..=hi1 {
            let bindings: Bindings = [(Sym(0), v0), (Sym(1), v1)].into_iter().collect();
            assert_eq!(
                expr.eval(&bindings),
                rest.eval(&bindings).map(|r| coeff * v0 + r),
                "{expr} at s0={v0}, s1={v1}: {coeff}*s0 + {rest}"
            );
        }
    }
    (coeff, rest)
}

#[test]
fn a_plain_stride_is_its_coefficient() {
    let (coeff, rest) = check_affine(&(s(0) * 64 + s(1) + 5), 9, 3);
    assert_eq!((coeff, rest.to_string()), (64, "s1 + 5".to_string()));
}

#[test]
fn an_unravelled_position_is_affine_inside_one_row() {
    // gid = 7*s1 + s0 with s0 < 7: the position in an [n, 5, 7] tensor read transposed.
    let gid = s(1) * 7 + s(0);
    let (w, h) = (Expr::int(7), Expr::int(5));
    let offset = gid.modulo(&w) * 5 + gid.floor_div(&w).modulo(&h) + gid.floor_div(&(&w * &h)) * 35;
    let (coeff, rest) = check_affine(&offset, 6, 40);
    assert_eq!(coeff, 5);
    assert!(rest.mentions(Sym(1)));
}

#[test]
fn a_strided_window_with_padding_is_affine_in_the_output_column() {
    // Input column of a stride-2, padding-1 window at tap s1: 2*s0 - 1 + s1.
    let column = s(0) * 2 - 1 + s(1);
    check_affine(&column, 20, 2);
}

#[test]
fn a_division_that_cuts_through_the_range_is_not_affine() {
    let ranges = ranges(9, 3);
    assert_eq!(
        s(0).floor_div(&Expr::int(4)).affine_in(Sym(0), &ranges),
        None
    );
    assert_eq!((s(0) * s(1)).affine_in(Sym(0), &ranges), None);
    assert_eq!(Expr::min(&s(0), &s(1)).affine_in(Sym(0), &ranges), None);
    let unbounded = |_| ValueRange::at_least(0);
    assert_eq!(
        s(0).modulo(&Expr::int(4)).affine_in(Sym(0), &unbounded),
        None
    );
}

#[test]
fn a_divisor_multiple_of_the_stride_divides_it_exactly() {
    let (coeff, _) = check_affine(&(s(0) * 6 + s(1)).floor_div(&Expr::int(3)), 9, 5);
    assert_eq!(coeff, 2);
}

#[test]
fn periods_are_the_divisors_of_the_symbol() {
    let gid = s(0);
    let offset =
        gid.modulo(&Expr::int(7)) + gid.floor_div(&Expr::int(35)) + s(1).floor_div(&Expr::int(3));
    assert_eq!(
        offset.periods_of(Sym(0)).into_iter().collect::<Vec<_>>(),
        [7, 35]
    );
}

#[test]
fn substitute_with_binds_several_symbols_at_once() {
    let expr = (s(0) * s(2) + s(3)).floor_div(&s(2));
    let bound = expr.substitute_with(&|sym| (sym.0 >= 2).then(|| Expr::int(i64::from(sym.0) * 10)));
    assert_eq!(bound.to_string(), "s0 + 1");
}
