//! Unit tests for the symbolic engine: printed forms, each named rule, parsing, ranges,
//! relations, evaluators and equivalence.

use expect_test::expect;

use super::*;

fn s(n: u32) -> Expr {
    Expr::sym(Sym(n))
}

#[test]
fn conv_length_prints_in_maths_form() {
    let length = (s(0) - 3).floor_div(&Expr::int(2)) + 1;
    expect![["(s0 - 3)//2 + 1"]].assert_eq(&length.to_string());
}
