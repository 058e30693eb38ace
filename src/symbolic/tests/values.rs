//! Unit tests for values: evaluation, overflow, value ranges and bounds, relations, the
//! compiled evaluators and sampling-based equivalence.
//!
//! Invariant: expected values follow Python semantics and were checked by hand, not copied
//! from the engine.

use expect_test::expect;

use super::super::*;
use super::{bind, guard_name, parse, s, sizes, unbounded, wgsl_name};

#[test]
fn eval_uses_python_floor_semantics() {
    let b = bind(&[(0, -7), (1, 2)]);
    assert_eq!(parse("s0//s1").eval(&b), Some(-4));
    assert_eq!(parse("s0 % s1").eval(&b), Some(1));
    assert_eq!(parse("s1 % s0").eval(&b), Some(-5));
    assert_eq!(parse("s1//s0").eval(&b), Some(-1));
    assert_eq!(parse("Min(s0, s1)*Max(s0, s1)").eval(&b), Some(-14));
    assert_eq!(parse("s0**3").eval(&b), Some(-343));
    assert_eq!(parse("s0 + s2").eval(&b), None, "unbound symbol");
    assert_eq!(parse("s0//(s1 - 2)").eval(&b), None, "division by zero");
    assert_eq!(parse("s0 % (s1 - 2)").eval(&b), None, "modulo by zero");
}

#[test]
fn overflow_returns_none_and_never_panics() {
    let huge = Expr::int(i64::MAX);
    let overflowed = &huge + 1;
    assert!(overflowed.is_overflow());
    assert_eq!(overflowed.eval(&Bindings::new()), None);
    assert_eq!(overflowed.to_string(), "overflow");
    assert!(
        overflowed.floor_div(&Expr::int(1)).is_overflow(),
        "overflow is sticky"
    );
    assert!((&huge * &huge).is_overflow());
    assert!(
        parse("(s0 + 2)**64").is_overflow(),
        "binomial coefficients leave i64"
    );

    let big = bind(&[(0, i64::MAX), (1, -1), (2, i64::MIN)]);
    for text in [
        "s0 + 1",
        "s0*2",
        "s0**2",
        "s2//s1",
        "-s2",
        "s0 + s0",
        "(s0 + 1)//2",
        "Max(s0 + 1, 0)",
    ] {
        let expr = parse(text);
        assert_eq!(expr.eval(&big), None, "{text}");
        assert_eq!(
            CompiledExpr::new(&expr).eval(&[i64::MAX, -1, i64::MIN]),
            None,
            "{text}"
        );
    }
    assert_eq!(parse("s2 % s1").eval(&big), Some(0), "i64::MIN % -1 is 0");
    let min_literal = parse("-9223372036854775808");
    assert_eq!(min_literal.as_int(), Some(i64::MIN));
    assert_eq!(
        Expr::int(i64::MIN).floor_div(&Expr::int(-1)).eval(&big),
        None
    );
    let wide = |_: Sym| ValueRange::new(Some(i64::MIN), Some(i64::MAX));
    let bounds = parse("s0*s1*s2 + s0**5 - s1//s2").bounds(&wide);
    assert_eq!(bounds, ValueRange::unbounded());
    assert_eq!(
        parse("s0**64").bounds(&sizes),
        ValueRange::new(Some(i64::MAX), None)
    );
    assert!(overflowed.to_wgsl(&wgsl_name, &sizes).contains("overflow"));
}

#[test]
fn value_range_prints_like_pytorch_and_intersects() {
    let printed = [
        ValueRange::at_least(2),
        ValueRange::new(Some(2), Some(512)),
        ValueRange::at_most(5),
        ValueRange::unbounded(),
        ValueRange::exact(3),
    ]
    .map(|range| range.to_string())
    .join(" ");
    expect![["[2, int_oo] [2, 512] [-int_oo, 5] [-int_oo, int_oo] [3, 3]"]].assert_eq(&printed);
    let size = ValueRange::at_least(2);
    assert!(size.contains(2) && !size.contains(1));
    assert_eq!(
        size.intersect(&ValueRange::at_most(8)),
        Some(ValueRange::new(Some(2), Some(8)))
    );
    assert_eq!(size.intersect(&ValueRange::at_most(1)), None);
    assert_eq!(ValueRange::exact(4).is_singleton(), Some(4));
    assert_eq!(size.is_singleton(), None);
}

#[test]
fn bounds_follow_interval_arithmetic() {
    let report = [
        "(s0 - 3)//2 + 1",
        "s0 % 4",
        "s0 % s1",
        "-s0 + 5",
        "s0*s1 - 1",
        "Min(s0, 512)",
        "(s0 - 100)**2",
        "(-s0)//3",
        "s0//(s1 - 10)",
        "s0 - s0//2",
    ]
    .map(|text| format!("{text}: {}\n", parse(text).bounds(&sizes)))
    .concat();
    expect![[r#"
        (s0 - 3)//2 + 1: [0, int_oo]
        s0 % 4: [0, 3]
        s0 % s1: [0, int_oo]
        -s0 + 5: [-int_oo, 3]
        s0*s1 - 1: [3, int_oo]
        Min(s0, 512): [2, 512]
        (s0 - 100)**2: [-int_oo, int_oo]
        (-s0)//3: [-int_oo, -1]
        s0//(s1 - 10): [-int_oo, int_oo]
        s0 - s0//2: [-int_oo, int_oo]
    "#]]
    .assert_eq(&report);
}

#[test]
fn relations_print_negate_simplify_and_decide() {
    let report = [
        ("2*s0 - 4", CmpOp::Ge, "0"),
        ("5 - s0", CmpOp::Gt, "0"),
        ("s0", CmpOp::Eq, "64"),
        ("s1", CmpOp::Ne, "1"),
        ("s0", CmpOp::Eq, "s1"),
        ("2*s0", CmpOp::Eq, "3"),
        ("4*s0 + 2", CmpOp::Lt, "2*s1 + 7"),
        ("s0 % 4", CmpOp::Lt, "4"),
        ("Max(1, s0)", CmpOp::Eq, "s0"),
        ("3", CmpOp::Le, "4"),
    ]
    .map(|(lhs, op, rhs)| {
        let rel = Rel::new(parse(lhs), op, parse(rhs));
        format!(
            "{rel} | simplify: {} | negate: {} | decide: {:?}\n",
            rel.simplify(),
            rel.negate(),
            rel.decide_by_ranges(&sizes)
        )
    })
    .concat();
    expect![[r#"
        2*s0 - 4 >= 0 | simplify: s0 >= 2 | negate: 2*s0 - 4 < 0 | decide: Some(true)
        -s0 + 5 > 0 | simplify: s0 < 5 | negate: -s0 + 5 <= 0 | decide: None
        s0 == 64 | simplify: s0 == 64 | negate: s0 != 64 | decide: None
        s1 != 1 | simplify: s1 != 1 | negate: s1 == 1 | decide: Some(true)
        s0 == s1 | simplify: s0 == s1 | negate: s0 != s1 | decide: None
        2*s0 == 3 | simplify: 2*s0 == 3 | negate: 2*s0 != 3 | decide: Some(false)
        4*s0 + 2 < 2*s1 + 7 | simplify: 2*s0 <= s1 + 2 | negate: 4*s0 + 2 >= 2*s1 + 7 | decide: None
        s0 % 4 < 4 | simplify: s0 % 4 < 4 | negate: s0 % 4 >= 4 | decide: Some(true)
        Max(1, s0) == s0 | simplify: Max(1, s0) == s0 | negate: Max(1, s0) != s0 | decide: Some(true)
        3 <= 4 | simplify: -1 <= 0 | negate: 3 > 4 | decide: Some(true)
    "#]].assert_eq(&report);
    let guard = Rel::new(s(0), CmpOp::Ge, Expr::int(2));
    assert_eq!(guard.eval(&bind(&[(0, 2)])), Some(true));
    assert_eq!(guard.eval(&bind(&[(0, 1)])), Some(false));
    assert_eq!(guard.eval(&Bindings::new()), None);
    expect![["L['x'].size()[0] >= 2"]].assert_eq(&guard.to_source(&guard_name));
}

#[test]
fn compiled_evaluators_match_tree_evaluation() {
    let conv = parse("(s0 - 3)//2 + 1");
    let compiled = CompiledExpr::new(&conv);
    assert_eq!(compiled.eval(&[64]), Some(31));
    assert_eq!(compiled.eval(&[]), None, "missing slot");
    let mixed = parse("7 - 3*s1*(s0 % 4)**2 + Max(s2, 1)//Min(s0, 2)");
    for values in [[5, -2, 9], [-3, 4, 0], [8, 8, -8]] {
        let bindings = bind(&[(0, values[0]), (1, values[1]), (2, values[2])]);
        assert_eq!(
            CompiledExpr::new(&mixed).eval(&values),
            mixed.eval(&bindings)
        );
    }
    assert_eq!(CompiledExpr::new(&Expr::int(-4)).eval(&[]), Some(-4));
    let rel = CompiledRel::new(&Rel::new(conv.clone(), CmpOp::Ge, Expr::int(2)));
    assert_eq!(rel.eval(&[5]), Some(true));
    assert_eq!(rel.eval(&[4]), Some(false));
    assert_eq!(rel.eval(&[]), None);
}

#[test]
fn compiled_evaluator_falls_back_to_a_vec_beyond_the_inline_stack() {
    let mut nested = s(0);
    for n in 1..40 {
        nested = (s(n) + 1).floor_div(&(nested + 2));
    }
    let compiled = CompiledExpr::new(&nested);
    assert!(
        compiled.stack_depth() > 32,
        "depth {}",
        compiled.stack_depth()
    );
    let values: Vec<i64> = (0..40).map(|n| 1000 - n).collect();
    let bindings: Bindings = values
        .iter()
        .enumerate()
        .map(|(n, v)| (Sym(n as u32), *v))
        .collect();
    assert_eq!(compiled.eval(&values), nested.eval(&bindings));
    assert!(nested.eval(&bindings).is_some());
}

#[test]
fn equivalence_accepts_rewritings_and_rejects_counterexamples() {
    assert!(parse("2*s0").is_equivalent(&parse("s0*2"), &sizes));
    assert!(parse("2*s0").is_equivalent(&parse("s0 + s0"), &sizes));
    assert!(parse("(s0 + 2)//2").is_equivalent(&parse("s0//2 + 1"), &sizes));
    let conv = parse("(s0 - 1)//2 + 1");
    let wrong = parse("s0//2");
    assert!(!conv.is_equivalent(&wrong, &sizes));
    let odd = bind(&[(0, 3)]);
    assert_ne!(
        conv.eval(&odd),
        wrong.eval(&odd),
        "they differ at odd sizes"
    );
    // Equal only because of the ranges: ceil division written two ways.
    assert!(parse("(s0 + 1)//2").is_equivalent(&parse("s0 - s0//2"), &sizes));
    assert!(parse("Max(1, s0)").is_equivalent(&s(0), &sizes));
    assert!(!parse("Max(1, s0)").is_equivalent(&s(0), &unbounded));
    // Differences that only show far from small values or at range ends.
    let capped = |_: Sym| ValueRange::new(Some(2), Some(512));
    assert!(!parse("Min(s0, 511)").is_equivalent(&s(0), &capped));
    assert!(parse("Min(s0, 512)").is_equivalent(&s(0), &capped));
    // Range ends far beyond small values are skipped rather than overflowing.
    let huge = |_: Sym| ValueRange::new(Some(2), Some(i64::MAX));
    assert!(parse("(s0 + 1)//2").is_equivalent(&parse("s0 - s0//2"), &huge));
    // Five symbols take the pseudo-random path.
    let five = parse("s0 + s1 + s2 + s3 + s4");
    assert!(five.is_equivalent(&parse("s4 + s3 + s2 + s1 + s0"), &sizes));
    assert!(!five.is_equivalent(&parse("s4 + s3 + s2 + s1 + s0 % 7"), &sizes));
}
