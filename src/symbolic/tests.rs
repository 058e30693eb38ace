//! Unit tests for the symbolic engine's forms: building, printing (maths, source, WGSL),
//! each named rule and parsing. Values (evaluation, overflow, ranges, relations, compiled
//! evaluators, equivalence) are in `tests/values.rs`; property tests and the exhaustive
//! small-value sweeps of the division rules in `tests/props.rs` and `tests/sweep.rs`.
//!
//! Invariant: every printed form is pinned by an expect-test snapshot that was checked by
//! hand; refresh with `UPDATE_EXPECT=1` only for an intended change of form.

mod affine;
mod props;
mod sweep;
mod values;

use expect_test::expect;

use super::*;

fn s(n: u32) -> Expr {
    Expr::sym(Sym(n))
}

fn parse(text: &str) -> Expr {
    text.parse()
        .unwrap_or_else(|err| panic!("{text:?} should parse: {err}"))
}

fn bind(values: &[(u32, i64)]) -> Bindings {
    values.iter().map(|(n, v)| (Sym(*n), *v)).collect()
}

fn unbounded(_: Sym) -> ValueRange {
    ValueRange::unbounded()
}

fn sizes(_: Sym) -> ValueRange {
    ValueRange::at_least(2)
}

fn guard_name(sym: Sym) -> String {
    format!("L['x'].size()[{}]", sym.0)
}

fn wgsl_name(sym: Sym) -> String {
    format!("d{}", sym.0)
}

/// One expression per line, `input => maths form`.
fn maths_table(inputs: &[&str]) -> String {
    inputs
        .iter()
        .map(|text| format!("{text} => {}\n", parse(text)))
        .collect()
}

#[test]
fn sym_prints_and_indexes() {
    assert_eq!(Sym(3).to_string(), "s3");
    assert_eq!(Sym(3).index(), 3);
}

#[test]
fn operators_build_canonical_forms() {
    let conv = (s(0) - 3).floor_div(&Expr::int(2)) + 1;
    expect![["(s0 - 3)//2 + 1"]].assert_eq(&conv.to_string());
    assert_eq!(&s(0) * 2, s(0) + s(0));
    assert_eq!(s(0) * 2, Expr::int(2) * s(0));
    assert_eq!(-(&s(0) - 5), Expr::int(5) - s(0));
    assert_eq!((s(0) + 1) * (s(0) - 1), s(0).pow(2) - 1);
    assert_eq!(s(0) - s(0), Expr::int(0));
    assert_eq!(Expr::from(4) + Expr::from(Sym(1)), s(1) + 4);
    assert_eq!(2 * &s(0) - 1, s(0) * 2 - 1);
    assert_eq!(1 - s(0), -s(0) + 1);
}

#[test]
fn accessors_report_constants_symbols_and_free_symbols() {
    assert_eq!(parse("2 + 3").as_int(), Some(5));
    assert_eq!(parse("s0 + 1").as_int(), None);
    assert_eq!(parse("s2").as_sym(), Some(Sym(2)));
    assert_eq!(parse("2*s2").as_sym(), None);
    assert_eq!(parse("s2 + 1").as_sym(), None);
    let syms: Vec<Sym> = parse("s3*(s1 % s0) + Max(s2, 1)")
        .free_syms()
        .into_iter()
        .collect();
    assert_eq!(syms, vec![Sym(0), Sym(1), Sym(2), Sym(3)]);
}

#[test]
fn display_uses_maths_form_with_minimal_parentheses() {
    let table = maths_table(&[
        "2*s0 + 3",
        "s0 - 1",
        "s1*s0",
        "(s0 - 1)//2 + 1",
        "s0 % 4",
        "Max(1, s0)",
        "Min(s0, 512)",
        "min(512, s0)",
        "5 - s0",
        "s0**2",
        "(s0 + s1)**2",
        "5 - s0//2",
        "2*(s0//2)",
        "s1*(s0 % 4)",
        "(2*s0)//3",
        "s0//(s1 + 1)",
        "s0 // -2",
        "-(s0 % 4)",
        "(s0//3)**2",
        "-s0*s1 + 3",
        "-5",
        "0",
    ]);
    expect![[r#"
        2*s0 + 3 => 2*s0 + 3
        s0 - 1 => s0 - 1
        s1*s0 => s0*s1
        (s0 - 1)//2 + 1 => (s0 - 1)//2 + 1
        s0 % 4 => s0 % 4
        Max(1, s0) => Max(1, s0)
        Min(s0, 512) => Min(s0, 512)
        min(512, s0) => Min(s0, 512)
        5 - s0 => -s0 + 5
        s0**2 => s0**2
        (s0 + s1)**2 => s0**2 + 2*s0*s1 + s1**2
        5 - s0//2 => -(s0//2) + 5
        2*(s0//2) => 2*(s0//2)
        s1*(s0 % 4) => s1*(s0 % 4)
        (2*s0)//3 => (2*s0)//3
        s0//(s1 + 1) => s0//(s1 + 1)
        s0 // -2 => (-s0)//2
        -(s0 % 4) => -(s0 % 4)
        (s0//3)**2 => (s0//3)**2
        -s0*s1 + 3 => -s0*s1 + 3
        -5 => -5
        0 => 0
    "#]]
    .assert_eq(&table);
}

#[test]
fn to_source_matches_pytorch_guard_spelling() {
    let conv = parse("(s2 - 3)//2 + 1");
    expect![["(1 + (((-3) + L['x'].size()[2]) // 2))"]].assert_eq(&conv.to_source(&guard_name));
    expect![["(L['x'].size()[0] % 4)"]].assert_eq(&parse("s0 % 4").to_source(&guard_name));
    let product_name = |sym: Sym| format!("L['a'].size()[{}]", 2 - sym.0);
    expect![["L['a'].size()[2]*L['a'].size()[1]"]]
        .assert_eq(&parse("s1*s0").to_source(&product_name));
    expect![["L['x'].size()[0]"]].assert_eq(&s(0).to_source(&guard_name));
    let more = [
        "5 - s0",
        "2*s0 - 3*s1",
        "s0**2",
        "(s0//2)**2*s1",
        "s0**17",
        "Max(1, s0)",
        "-(s0//2)",
        "(2*s0)//(3*s1)",
        "-7",
    ]
    .map(|text| format!("{text} => {}\n", parse(text).to_source(&guard_name)))
    .concat();
    expect![[r#"
        5 - s0 => (5 + (-1)*L['x'].size()[0])
        2*s0 - 3*s1 => (2*L['x'].size()[0] + (-3)*L['x'].size()[1])
        s0**2 => L['x'].size()[0]*L['x'].size()[0]
        (s0//2)**2*s1 => L['x'].size()[1]*(L['x'].size()[0] // 2)*(L['x'].size()[0] // 2)
        s0**17 => L['x'].size()[0]**17
        Max(1, s0) => max(1, L['x'].size()[0])
        -(s0//2) => (-1)*(L['x'].size()[0] // 2)
        (2*s0)//(3*s1) => ((2*L['x'].size()[0]) // (3*L['x'].size()[1]))
        -7 => -7
    "#]]
    .assert_eq(&more);
}

#[test]
fn to_wgsl_uses_plain_division_only_when_ranges_prove_it_floors() {
    let at_least_three = |_: Sym| ValueRange::at_least(3);
    let lines = [
        ("(s0 - 3)//2 + 1", "sizes", sizes as fn(Sym) -> ValueRange),
        ("(s0 - 3)//2 + 1", "sizes >= 3", at_least_three),
        ("s0 % 4", "sizes", sizes),
        ("s0 % 4", "unbounded", unbounded),
        ("s0//s1", "sizes", sizes),
        ("s0//s1", "unbounded", unbounded),
        ("s0 % s1", "sizes", sizes),
        ("Min(s0, 512)*Max(1, s1)", "sizes", sizes),
        ("-(s0//2) + s1**3", "sizes", sizes),
        ("2*s0 - 7", "sizes", sizes),
        ("-7", "sizes", sizes),
        ("s0**7 + 1", "sizes", sizes),
    ]
    .map(|(text, label, ranges)| {
        format!(
            "{text} [{label}] => {}\n",
            parse(text).to_wgsl(&wgsl_name, &ranges)
        )
    })
    .concat();
    expect![[r#"
        (s0 - 3)//2 + 1 [sizes] => floor_div_i32(d0 - 3i, 2i) + 1i
        (s0 - 3)//2 + 1 [sizes >= 3] => (d0 - 3i) / 2i + 1i
        s0 % 4 [sizes] => d0 % 4i
        s0 % 4 [unbounded] => floor_mod_i32(d0, 4i)
        s0//s1 [sizes] => d0 / d1
        s0//s1 [unbounded] => floor_div_i32(d0, d1)
        s0 % s1 [sizes] => d0 % d1
        Min(s0, 512)*Max(1, s1) [sizes] => min(512i, d0) * max(1i, d1)
        -(s0//2) + s1**3 [sizes] => d1 * d1 * d1 - d0 / 2i
        2*s0 - 7 [sizes] => 2i * d0 - 7i
        -7 [sizes] => -7i
        s0**7 + 1 [sizes] => pow_i32(d0, 7u) + 1i
    "#]]
    .assert_eq(&lines);
    assert!(WGSL_HELPERS.contains("fn floor_div_i32(a: i32, b: i32) -> i32"));
    assert!(WGSL_HELPERS.contains("fn floor_mod_i32(a: i32, b: i32) -> i32"));
    assert!(WGSL_HELPERS.contains("fn pow_i32(base: i32, exp: u32) -> i32"));
}

/// Each rule with an input that fires it; the derivation log is snapshotted below.
const RULE_CASES: &[(&str, &str)] = &[
    ("add-zero", "s0 + 0"),
    ("fold-constants", "(s0 + 2) + 3"),
    ("collect-like-terms", "s0 + 2*s0"),
    ("mul-zero", "(s0 + 1)*0"),
    ("mul-one", "1*s0"),
    ("distribute", "2*(s0 + 1)"),
    ("collect-powers", "s0*s0"),
    ("pow-zero", "s0**0"),
    ("pow-one", "s0**1"),
    ("floordiv-const", "-7//2"),
    ("floordiv-one", "s0//1"),
    ("floordiv-neg-divisor", "s0//(-2)"),
    ("floordiv-exact", "(4*s0 + 6)//2"),
    ("floordiv-bounded", "(s0 % 4)//4"),
    ("floordiv-nested", "(s0//2)//3"),
    ("floordiv-split", "(2*s0 + s1)//2"),
    ("floordiv-gcd", "(2*s0 + 2)//4"),
    ("mod-const", "-7 % 3"),
    ("mod-one", "s0 % 1"),
    ("mod-neg-divisor", "s0 % (-3)"),
    ("mod-of-multiple", "(6*s0) % 3"),
    ("mod-bounded", "(s0 % 3) % 5"),
    ("mod-nested", "(s0 % 8) % 4"),
    ("mod-split", "(4*s0 + s1 + 5) % 4"),
    ("mod-gcd", "(2*s0) % 4"),
    ("min-const", "Min(3, -2)"),
    ("min-same", "Min(s0, s0)"),
    ("min-by-range", "Min(s0, s0 + 1)"),
    ("min-absorb", "Min(s0, Max(s0, s1))"),
    ("max-const", "Max(3, -2)"),
    ("max-same", "Max(s0, s0)"),
    ("max-by-range", "Max(s0 - 1, s0)"),
    ("max-absorb", "Max(s0, Min(s0, s1))"),
    ("f32ratio-const", "F32Ratio(2, 3)"),
    ("f32floormul-const", "F32FloorMul(41, 1019727372)"),
];

#[test]
fn every_named_rule_fires_and_is_logged() {
    let mut report = String::new();
    for (rule, text) in RULE_CASES {
        let raw: RawExpr = text.parse().expect("rule case parses");
        let (simplified, log) = raw.simplify_with_log();
        assert!(
            log.iter().any(|rewrite| rewrite.rule == *rule),
            "{rule} did not fire on {text}: {log:?}"
        );
        report.push_str(&format!("{text} => {simplified}\n"));
        for rewrite in log {
            report.push_str(&format!(
                "  {}: {} -> {}\n",
                rewrite.rule, rewrite.before, rewrite.after
            ));
        }
    }
    expect![[r#"
        s0 + 0 => s0
          add-zero: s0 + 0 -> s0
        (s0 + 2) + 3 => s0 + 5
          fold-constants: s0 + 2 + 3 -> s0 + 5
        s0 + 2*s0 => 3*s0
          collect-like-terms: s0 + 2*s0 -> 3*s0
        (s0 + 1)*0 => 0
          mul-zero: (s0 + 1)*0 -> 0
        1*s0 => s0
          mul-one: 1*s0 -> s0
        2*(s0 + 1) => 2*s0 + 2
          distribute: 2*(s0 + 1) -> 2*s0 + 2
        s0*s0 => s0**2
          collect-powers: s0*s0 -> s0**2
        s0**0 => 1
          pow-zero: s0**0 -> 1
        s0**1 => s0
          pow-one: s0**1 -> s0
        -7//2 => -4
          floordiv-const: (-7)//2 -> -4
        s0//1 => s0
          floordiv-one: s0//1 -> s0
        s0//(-2) => (-s0)//2
          floordiv-neg-divisor: s0//(-2) -> (-s0)//2
        (4*s0 + 6)//2 => 2*s0 + 3
          floordiv-exact: (4*s0 + 6)//2 -> 2*s0 + 3
        (s0 % 4)//4 => 0
          floordiv-bounded: (s0 % 4)//4 -> 0
        (s0//2)//3 => s0//6
          fold-constants: 2*3 -> 6
          floordiv-nested: (s0//2)//3 -> s0//6
        (2*s0 + s1)//2 => s0 + s1//2
          floordiv-split: (2*s0 + s1)//2 -> s0 + s1//2
        (2*s0 + 2)//4 => (s0 + 1)//2
          floordiv-gcd: (2*s0 + 2)//4 -> (s0 + 1)//2
        -7 % 3 => 2
          mod-const: (-7) % 3 -> 2
        s0 % 1 => 0
          mod-one: s0 % 1 -> 0
        s0 % (-3) => -((-s0) % 3)
          mod-neg-divisor: s0 % (-3) -> -((-s0) % 3)
        (6*s0) % 3 => 0
          mod-of-multiple: (6*s0) % 3 -> 0
        (s0 % 3) % 5 => s0 % 3
          mod-bounded: (s0 % 3) % 5 -> s0 % 3
        (s0 % 8) % 4 => s0 % 4
          mod-nested: (s0 % 8) % 4 -> s0 % 4
        (4*s0 + s1 + 5) % 4 => (s1 + 1) % 4
          mod-split: (4*s0 + s1 + 5) % 4 -> (s1 + 1) % 4
        (2*s0) % 4 => 2*(s0 % 2)
          mod-gcd: (2*s0) % 4 -> 2*(s0 % 2)
        Min(3, -2) => -2
          min-const: Min(3, -2) -> -2
        Min(s0, s0) => s0
          min-same: Min(s0, s0) -> s0
        Min(s0, s0 + 1) => s0
          min-by-range: Min(s0, s0 + 1) -> s0
        Min(s0, Max(s0, s1)) => s0
          min-absorb: Min(s0, Max(s0, s1)) -> s0
        Max(3, -2) => 3
          max-const: Max(-2, 3) -> 3
        Max(s0, s0) => s0
          max-same: Max(s0, s0) -> s0
        Max(s0 - 1, s0) => s0
          max-by-range: Max(s0 - 1, s0) -> s0
        Max(s0, Min(s0, s1)) => s0
          max-absorb: Max(s0, Min(s0, s1)) -> s0
        F32Ratio(2, 3) => 1059760811
          f32ratio-const: F32Ratio(2, 3) -> 1059760811
        F32FloorMul(41, 1019727372) => 0
          f32floormul-const: F32FloorMul(41, 1019727372) -> 0
    "#]]
    .assert_eq(&report);
}

#[test]
fn rule_table_covers_every_rule_name() {
    let covered: Vec<&str> = RULE_CASES.iter().map(|(rule, _)| *rule).collect();
    let missing: Vec<&str> = rule_names()
        .into_iter()
        .filter(|rule| !covered.contains(rule) && *rule != "sym-singleton")
        .collect();
    assert_eq!(missing, Vec::<&str>::new());
}

#[test]
fn range_aware_rules_fire_in_simplify_in() {
    let report = [
        ("s0//8", ValueRange::new(Some(0), Some(7))),
        ("s0 % 8", ValueRange::new(Some(0), Some(7))),
        ("(s0 + 8) % 8", ValueRange::new(Some(0), Some(7))),
        ("Max(1, s0)", ValueRange::at_least(1)),
        ("Min(s0, 512)", ValueRange::new(Some(2), Some(512))),
        ("Max(1, s0 - 1)", ValueRange::at_least(2)),
        ("s0 + 3", ValueRange::exact(64)),
        ("(s0 - 1)//s1", ValueRange::new(Some(1), Some(4))),
    ]
    .map(|(text, range)| {
        let ranges = |_: Sym| range;
        let (simplified, log) = parse(text).simplify_in_with_log(&ranges);
        let rules: Vec<&str> = log.iter().map(|rewrite| rewrite.rule).collect();
        format!("{text} in {range} => {simplified}  {rules:?}\n")
    })
    .concat();
    expect![[r#"
        s0//8 in [0, 7] => 0  ["floordiv-bounded"]
        s0 % 8 in [0, 7] => s0  ["mod-bounded"]
        (s0 + 8) % 8 in [0, 7] => s0  ["mod-bounded"]
        Max(1, s0) in [1, int_oo] => s0  ["max-by-range"]
        Min(s0, 512) in [2, 512] => s0  ["min-by-range"]
        Max(1, s0 - 1) in [2, int_oo] => s0 - 1  ["max-by-range"]
        s0 + 3 in [64, 64] => 67  ["sym-singleton"]
        (s0 - 1)//s1 in [1, 4] => (s0 - 1)//s1  []
    "#]]
    .assert_eq(&report);
}

#[test]
fn simplify_with_log_on_a_canonical_expr_is_quiet() {
    let conv = parse("(s0 - 3)//2 + 1");
    let (same, log) = conv.simplify_with_log();
    assert_eq!(same, conv);
    assert!(log.is_empty());
}

#[test]
fn substitute_replaces_and_resimplifies() {
    let conv = parse("(s0 - 3)//2 + 1");
    assert_eq!(conv.substitute(Sym(0), &Expr::int(64)), Expr::int(31));
    assert_eq!(conv.substitute(Sym(0), &parse("2*s1 + 3")), parse("s1 + 1"));
    assert_eq!(conv.substitute(Sym(5), &Expr::int(1)), conv);
}

#[test]
fn parse_round_trips_through_display() {
    for text in [
        "(s0 - 1)//2 + 1",
        "-(s0//2) + 5",
        "s0**2 + 2*s0*s1 + s1**2",
        "Min(s1, 512)*Max(1, s0) - s2 % 3",
        "(-s0)//2",
        "-((-s0) % 3)",
        "2*((s0 + 1) % 2)",
        "s0//(s1 + 1) - 7",
    ] {
        let expr = parse(text);
        assert_eq!(expr.to_string(), text, "canonical text prints as itself");
        assert_eq!(parse(&expr.to_string()), expr);
    }
}

#[test]
fn extreme_coefficients_round_trip_through_display() {
    let min = Expr::int(i64::MIN);
    for expr in [
        &min * &s(1) + s(0),
        s(0) + &min,
        &min * &s(0),
        s(0).floor_div(&min),
        &min + 0,
        Expr::int(i64::MAX) * s(2) - 1,
    ] {
        assert_eq!(parse(&expr.to_string()), expr, "{expr}");
        assert_eq!(
            parse(&expr.to_source(&|sym| sym.to_string())),
            expr,
            "{expr}"
        );
    }
}

#[test]
fn parse_follows_python_precedence() {
    let b = bind(&[(0, 7), (1, 3)]);
    let value = |text: &str| text.parse::<RawExpr>().expect("parses").eval(&b);
    assert_eq!(value("-s0**2"), Some(-49));
    assert_eq!(value("(-s0)**2"), Some(49));
    assert_eq!(value("-s0//2"), Some(-4));
    assert_eq!(value("-(s0//2)"), Some(-3));
    assert_eq!(value("s0 - s1 - 1"), Some(3));
    assert_eq!(value("s0*s1//2"), Some(10));
    assert_eq!(value("s0 % s1 * 2"), Some(2));
    assert_eq!(value("2**3**2"), Some(512));
    assert_eq!(value(" max( s0 ,s1 )+min(s0,s1) "), Some(10));
}

#[test]
fn parse_errors_name_the_column_and_what_was_expected() {
    let errors = [
        "s0 +",
        "s0 / 2",
        "(s0 - 1",
        "x + 1",
        "s0 2",
        "Max(s0)",
        "s0 ** s1",
        "2**-1",
        "99999999999999999999",
        "s0 $ 1",
        "",
    ]
    .map(|text| {
        format!(
            "{text:?}: {}\n",
            text.parse::<Expr>().expect_err("should fail")
        )
    })
    .concat();
    expect![[r#"
        "s0 +": column 5: expected an integer, a symbol like `s0`, `(`, `Min(` or `Max(`, found end of input
        "s0 / 2": column 4: expected `//` (true division `/` is not an integer operation), found `/`
        "(s0 - 1": column 8: expected `)`, found end of input
        "x + 1": column 1: expected a symbol like `s0`, or `Min`/`Max`, found `x`
        "s0 2": column 4: expected an operator or the end of input, found `2`
        "Max(s0)": column 7: expected `,` between the two arguments, found `)`
        "s0 ** s1": column 7: expected a constant exponent between 0 and 64, found `s1`
        "2**-1": column 4: expected a constant exponent between 0 and 64, found `-1`
        "99999999999999999999": column 1: expected an integer that fits i64, found `99999999999999999999`
        "s0 $ 1": column 4: expected an integer, a symbol, an operator or a parenthesis, found `$`
        "": column 1: expected an integer, a symbol like `s0`, `(`, `Min(` or `Max(`, found end of input
    "#]].assert_eq(&errors);
    let error = "s0 + ".parse::<Expr>().expect_err("should fail");
    assert_eq!(error.column, 6);
}

#[test]
fn raw_expr_prints_as_written() {
    let raw: RawExpr = "(s0 - 1)//2 + -(3 - s1)*2**2".parse().expect("parses");
    expect![["(s0 - 1)//2 + -(3 - s1)*2**2"]].assert_eq(&raw.to_string());
    let back: RawExpr = raw.to_string().parse().expect("reparses");
    assert_eq!(back, raw);
    let conv = parse("(s0 - 3)//2 + 1");
    assert_eq!(RawExpr::from(&conv).simplify(), conv);
}

#[test]
fn parse_refuses_oversized_or_overnested_input() {
    let deep = format!("{}s0{}", "(".repeat(100), ")".repeat(100));
    let error = deep.parse::<Expr>().expect_err("too deep");
    expect!["column 66: expected nesting at most 64 deep, found `(`"].assert_eq(&error.to_string());
    let negations = format!("{}s0", "-".repeat(100));
    assert!(negations.parse::<Expr>().is_err());
    let fine = format!("{}s0{}", "(".repeat(60), ")".repeat(60));
    assert_eq!(parse(&fine), s(0));
    let long = vec!["s0"; 2000].join(" + ");
    let error = long.parse::<Expr>().expect_err("too long");
    assert_eq!(error.column, 4097);
    let long_but_allowed = vec!["s0"; 800].join("+");
    assert_eq!(parse(&long_but_allowed), s(0) * 800);
}

#[test]
fn relations_parse_from_text() {
    let parsed = [
        "s0 >= 2",
        "2*s0 - 4>=0",
        "s1 != 1",
        "(s0 - 1)//2 + 1 == 32",
        "s0<s1",
        "Max(1, s0) <= 512",
    ]
    .map(|text| format!("{text} => {}\n", text.parse::<Rel>().expect("parses")))
    .concat();
    expect![[r#"
        s0 >= 2 => s0 >= 2
        2*s0 - 4>=0 => 2*s0 - 4 >= 0
        s1 != 1 => s1 != 1
        (s0 - 1)//2 + 1 == 32 => (s0 - 1)//2 + 1 == 32
        s0<s1 => s0 < s1
        Max(1, s0) <= 512 => Max(1, s0) <= 512
    "#]]
    .assert_eq(&parsed);
    let errors = ["s0", "s0 = 2", "s0 >= 2 >= 1", "s0 >="]
        .map(|text| format!("{text:?}: {}\n", text.parse::<Rel>().expect_err("fails")))
        .concat();
    expect![[r#"
        "s0": column 3: expected a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`), found end of input
        "s0 = 2": column 4: expected `==` or `!=`, found `=`
        "s0 >= 2 >= 1": column 9: expected an operator or the end of input, found `>=`
        "s0 >=": column 6: expected an integer, a symbol like `s0`, `(`, `Min(` or `Max(`, found end of input
    "#]].assert_eq(&errors);
}

#[test]
fn raw_operators_record_a_derivation() {
    let length = RawExpr::Sym(Sym(0));
    let padded = (length + 2 - 3).floor_div(RawExpr::Int(2)) + 1;
    expect![["(s0 + 2 - 3)//2 + 1"]].assert_eq(&padded.to_string());
    let (simplified, log) = padded.simplify_with_log();
    let steps: Vec<String> = log
        .iter()
        .map(|rewrite| format!("{}: {} -> {}", rewrite.rule, rewrite.before, rewrite.after))
        .collect();
    expect![[r#"
        (s0 - 1)//2 + 1
        fold-constants: s0 + 2 - 3 -> s0 - 1"#]]
    .assert_eq(&format!("{simplified}\n{}", steps.join("\n")));
    let doubled = (RawExpr::Sym(Sym(1)) * 2)
        .modulo(RawExpr::Int(4))
        .max(RawExpr::Int(1))
        .pow(2);
    assert_eq!(doubled.simplify(), parse("Max(1, 2*(s1 % 2))**2"));
    assert_eq!(
        (-RawExpr::Sym(Sym(1))).min(RawExpr::Int(0)).simplify(),
        parse("Min(-s1, 0)")
    );
}

#[test]
fn expressions_and_relations_serialize_as_text() {
    let conv = parse("(s0 - 3)//2 + 1");
    let json = serde_json::to_string(&conv).expect("serializes");
    expect![[r#""(s0 - 3)//2 + 1""#]].assert_eq(&json);
    assert_eq!(
        serde_json::from_str::<Expr>(&json).expect("deserializes"),
        conv
    );
    let guard = Rel::new(conv, CmpOp::Ge, Expr::int(2));
    let json = serde_json::to_string(&guard).expect("serializes");
    expect![[r#"{"lhs":"(s0 - 3)//2 + 1","op":"Ge","rhs":"2"}"#]].assert_eq(&json);
    assert_eq!(
        serde_json::from_str::<Rel>(&json).expect("deserializes"),
        guard
    );
    assert!(serde_json::from_str::<Expr>("\"s0 +\"").is_err());
}

/// PyTorch's nearest source index rounds the scale and the product to float32; exact
/// integer arithmetic reads another position at 2 → 82 (output 41) and 3 → 123 (41, 82).
/// The expression, its compiled form and `graph::nearest_source` agree everywhere, a
/// constant position folds, and the WGSL calls the long-division helper for the scale.
#[test]
fn nearest_source_is_pytorchs_float32_index() {
    let source = s(0).nearest_source(&s(1), &s(2));
    let compiled = CompiledExpr::new(&source);
    for (input, output) in [
        (2, 82),
        (3, 123),
        (4, 164),
        (5, 7),
        (7, 5),
        (10, 3),
        (1, 9),
        (9, 1),
    ] {
        for at in 0..output {
            let expected =
                crate::graph::nearest_source(at as usize, input as usize, output as usize);
            let bound = bind(&[(0, at), (1, input), (2, output)]);
            assert_eq!(
                source.eval(&bound),
                Some(expected as i64),
                "{at} of {input} → {output}"
            );
            assert_eq!(compiled.eval(&[at, input, output]), Some(expected as i64));
        }
    }
    assert_eq!(
        Expr::int(41).nearest_source(&Expr::int(2), &Expr::int(82)),
        Expr::int(0),
        "exact arithmetic would read 41 * 2 // 82 = 1"
    );
    expect!["Min(s1 - 1, F32FloorMul(s0, F32Ratio(s1, s2)))"].assert_eq(&source.to_string());
    expect!["min(d1 - 1i, i32(floor(f32(d0) * bitcast<f32>(tailor_ratio_bits(d1, d2)))))"]
        .assert_eq(&source.to_wgsl(&wgsl_name, &sizes));
    assert!(WGSL_RATIO_HELPER.contains("fn tailor_ratio_bits(a: i32, b: i32) -> i32"));
}

#[test]
fn polynomial_division_divides_by_a_sum_exactly_or_not_at_all() {
    let divide = |a: &str, b: &str| parse(a).divide_polynomial(&parse(b));
    assert_eq!(divide("(s0 + 1)*(s1 + 1)", "s1 + 1"), Some(parse("s0 + 1")));
    let side = "(s0 - 3)//4 + 1";
    assert_eq!(
        divide(&format!("({side})**2 * s1"), side),
        Some(parse(&format!("({side})*s1")))
    );
    assert_eq!(divide("s0*s1 - 2*s1", "s1"), Some(parse("s0 - 2")));
    assert_eq!(divide("s0*s1 + 1", "s1 + 1"), None);
    assert_eq!(divide("s0 + 1", "2*s0 + 2"), None);
}
