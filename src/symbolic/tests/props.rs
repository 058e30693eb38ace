//! Property tests over random expressions (depth <= 4, small coefficients, symbols s0..s3):
//! simplification keeps the value, bounds contain it, simplification is idempotent, the
//! maths and source forms parse back, the compiled evaluator agrees, and relations keep
//! their truth value, and affine splits keep the value over the split symbol's range.
//!
//! The reference value comes from `Tree::eval`, an independent evaluator written here over
//! the construction tree (i128 arithmetic with its own floor division), never through the
//! engine's rules.
//!
//! Invariant: 256 cases per property and no failure-persistence files, so the suite stays
//! fast and leaves nothing behind.

use proptest::prelude::*;

use super::super::*;

const SYMBOLS: u32 = 4;

/// How an expression was built, evaluated literally as the reference.
#[derive(Clone, Debug)]
enum Tree {
    Int(i64),
    Sym(u32),
    Add(Box<Tree>, Box<Tree>),
    Sub(Box<Tree>, Box<Tree>),
    Mul(Box<Tree>, Box<Tree>),
    Neg(Box<Tree>),
    FloorDiv(Box<Tree>, Box<Tree>),
    Mod(Box<Tree>, Box<Tree>),
    Min(Box<Tree>, Box<Tree>),
    Max(Box<Tree>, Box<Tree>),
    Pow(Box<Tree>, u32),
}

fn floor_div(a: i128, b: i128) -> Option<i128> {
    if b == 0 {
        return None;
    }
    let (q, r) = (a / b, a % b);
    Some(if r != 0 && (r < 0) != (b < 0) {
        q - 1
    } else {
        q
    })
}

impl Tree {
    /// `None` when undefined or when any intermediate leaves `i64`.
    fn eval(&self, values: &[i64; SYMBOLS as usize]) -> Option<i64> {
        let both =
            |a: &Tree, b: &Tree| Some((i128::from(a.eval(values)?), i128::from(b.eval(values)?)));
        let wide: i128 = match self {
            Tree::Int(v) => (*v).into(),
            Tree::Sym(n) => values[*n as usize].into(),
            Tree::Add(a, b) => both(a, b).map(|(a, b)| a + b)?,
            Tree::Sub(a, b) => both(a, b).map(|(a, b)| a - b)?,
            Tree::Mul(a, b) => both(a, b).map(|(a, b)| a * b)?,
            Tree::Neg(a) => -i128::from(a.eval(values)?),
            Tree::FloorDiv(a, b) => both(a, b).and_then(|(a, b)| floor_div(a, b))?,
            Tree::Mod(a, b) => both(a, b).and_then(|(a, b)| Some(a - b * floor_div(a, b)?))?,
            Tree::Min(a, b) => both(a, b).map(|(a, b)| a.min(b))?,
            Tree::Max(a, b) => both(a, b).map(|(a, b)| a.max(b))?,
            Tree::Pow(a, exp) => {
                let base = i128::from(a.eval(values)?);
                (0..*exp).try_fold(1i128, |acc, _| {
                    let next = acc.checked_mul(base)?;
                    i64::try_from(next).ok().map(|_| next)
                })?
            }
        };
        i64::try_from(wide).ok()
    }

    /// The same construction through the public API.
    fn build(&self) -> Expr {
        match self {
            Tree::Int(v) => Expr::int(*v),
            Tree::Sym(n) => Expr::sym(Sym(*n)),
            Tree::Add(a, b) => a.build() + b.build(),
            Tree::Sub(a, b) => a.build() - b.build(),
            Tree::Mul(a, b) => a.build() * b.build(),
            Tree::Neg(a) => -a.build(),
            Tree::FloorDiv(a, b) => a.build().floor_div(&b.build()),
            Tree::Mod(a, b) => a.build().modulo(&b.build()),
            // `Expr::min` spelled out: on an owned receiver `.min` would pick `Ord::min`.
            Tree::Min(a, b) => Expr::min(&a.build(), &b.build()),
            Tree::Max(a, b) => Expr::max(&a.build(), &b.build()),
            Tree::Pow(a, exp) => a.build().pow(*exp),
        }
    }

    /// Fully parenthesized text, for the parser route.
    fn text(&self) -> String {
        match self {
            Tree::Int(v) => format!("({v})"),
            Tree::Sym(n) => format!("s{n}"),
            Tree::Add(a, b) => format!("({} + {})", a.text(), b.text()),
            Tree::Sub(a, b) => format!("({} - {})", a.text(), b.text()),
            Tree::Mul(a, b) => format!("({} * {})", a.text(), b.text()),
            Tree::Neg(a) => format!("(-{})", a.text()),
            Tree::FloorDiv(a, b) => format!("({} // {})", a.text(), b.text()),
            Tree::Mod(a, b) => format!("({} % {})", a.text(), b.text()),
            Tree::Min(a, b) => format!("Min({}, {})", a.text(), b.text()),
            Tree::Max(a, b) => format!("max({}, {})", a.text(), b.text()),
            Tree::Pow(a, exp) => format!("({}**{exp})", a.text()),
        }
    }
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        (-6i64..=6).prop_map(Tree::Int),
        (0..SYMBOLS).prop_map(Tree::Sym),
        (0..SYMBOLS).prop_map(Tree::Sym),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let pair = || (inner.clone(), inner.clone());
        prop_oneof![
            pair().prop_map(|(a, b)| Tree::Add(Box::new(a), Box::new(b))),
            pair().prop_map(|(a, b)| Tree::Sub(Box::new(a), Box::new(b))),
            pair().prop_map(|(a, b)| Tree::Mul(Box::new(a), Box::new(b))),
            inner.clone().prop_map(|a| Tree::Neg(Box::new(a))),
            pair().prop_map(|(a, b)| Tree::FloorDiv(Box::new(a), Box::new(b))),
            (inner.clone(), 1i64..=7)
                .prop_map(|(a, c)| Tree::FloorDiv(Box::new(a), Box::new(Tree::Int(c)))),
            pair().prop_map(|(a, b)| Tree::Mod(Box::new(a), Box::new(b))),
            (inner.clone(), 1i64..=7)
                .prop_map(|(a, c)| Tree::Mod(Box::new(a), Box::new(Tree::Int(c)))),
            pair().prop_map(|(a, b)| Tree::Min(Box::new(a), Box::new(b))),
            pair().prop_map(|(a, b)| Tree::Max(Box::new(a), Box::new(b))),
            (inner.clone(), 0u32..=3).prop_map(|(a, e)| Tree::Pow(Box::new(a), e)),
        ]
    })
}

fn values(range: std::ops::RangeInclusive<i64>) -> impl Strategy<Value = [i64; SYMBOLS as usize]> {
    prop::array::uniform4(range)
}

fn bindings(values: &[i64; SYMBOLS as usize]) -> Bindings {
    (0..SYMBOLS).map(|n| (Sym(n), values[n as usize])).collect()
}

/// Per-symbol ranges `[lo, lo + width]` and values inside them.
fn ranged(lo: std::ops::RangeInclusive<i64>) -> impl Strategy<Value = ([ValueRange; 4], [i64; 4])> {
    prop::array::uniform4((lo, 0i64..=20, 0.0f64..=1.0)).prop_map(|picks| {
        let ranges = picks.map(|(lo, width, _)| ValueRange::new(Some(lo), Some(lo + width)));
        let values = picks.map(|(lo, width, t)| lo + (t * width as f64).round() as i64);
        (ranges, values)
    })
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn simplify_keeps_value(tree in tree(), samples in prop::collection::vec(values(-20..=40), 4)) {
        let expr = tree.build();
        for values in &samples {
            if let Some(expected) = tree.eval(values) {
                prop_assert_eq!(expr.eval(&bindings(values)), Some(expected), "{} => {}", tree.text(), expr);
            }
        }
    }

    #[test]
    fn parser_route_matches_operator_route(tree in tree()) {
        let expr = tree.build();
        let parsed: Expr = tree.text().parse().map_err(|e: ParseError| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&parsed, &expr);
        let raw: RawExpr = tree.text().parse().map_err(|e: ParseError| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(raw.simplify_with_log().0, expr);
    }

    #[test]
    fn bounds_contain_value(tree in tree(), (ranges, values) in ranged(-20..=20)) {
        let expr = tree.build();
        if let Some(value) = expr.eval(&bindings(&values)) {
            let bounds = expr.bounds(&|sym| ranges[sym.index()]);
            prop_assert!(bounds.contains(value), "{} = {} outside {}", expr, value, bounds);
        }
    }

    #[test]
    fn simplify_in_keeps_value(tree in tree(), (ranges, values) in ranged(-20..=20)) {
        let expr = tree.build();
        let simplified = expr.simplify_in(&|sym| ranges[sym.index()]);
        if let Some(expected) = tree.eval(&values) {
            prop_assert_eq!(simplified.eval(&bindings(&values)), Some(expected), "{} => {}", expr, simplified);
        }
    }

    #[test]
    fn simplify_in_keeps_value_for_sizes(tree in tree(), (ranges, values) in ranged(2..=44)) {
        let expr = tree.build();
        let simplified = expr.simplify_in(&|sym| ranges[sym.index()]);
        if let Some(expected) = tree.eval(&values) {
            prop_assert_eq!(simplified.eval(&bindings(&values)), Some(expected), "{} => {}", expr, simplified);
        }
    }

    #[test]
    fn simplify_is_idempotent(tree in tree(), (ranges, _) in ranged(2..=44)) {
        let expr = tree.build();
        prop_assert_eq!(&expr.simplify_in(&|_| ValueRange::unbounded()), &expr);
        prop_assert_eq!(&RawExpr::from(&expr).simplify(), &expr);
        let ranges = |sym: Sym| ranges[sym.index()];
        let once = expr.simplify_in(&ranges);
        prop_assert_eq!(once.simplify_in(&ranges), once);
    }

    #[test]
    fn display_then_parse_gives_equal_expr(tree in tree()) {
        let expr = tree.build();
        let printed = expr.to_string();
        let parsed: Expr = printed.parse().map_err(|e: ParseError| TestCaseError::fail(format!("{printed}: {e}")))?;
        prop_assert_eq!(parsed, expr, "{}", printed);
    }

    #[test]
    fn source_form_parses_to_equal_expr(tree in tree()) {
        let expr = tree.build();
        let printed = expr.to_source(&|sym| sym.to_string());
        let parsed: Expr = printed.parse().map_err(|e: ParseError| TestCaseError::fail(format!("{printed}: {e}")))?;
        prop_assert_eq!(parsed, expr, "{}", printed);
    }

    #[test]
    fn compiled_eval_matches_eval(tree in tree(), samples in prop::collection::vec(values(-20..=40), 4)) {
        let expr = tree.build();
        let compiled = CompiledExpr::new(&expr);
        for values in &samples {
            prop_assert_eq!(compiled.eval(values), expr.eval(&bindings(values)), "{}", expr);
        }
    }

    #[test]
    fn relations_keep_truth(lhs in tree(), rhs in tree(), op in prop::sample::select(vec![CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]), (ranges, values) in ranged(2..=44)) {
        let rel = Rel::new(lhs.build(), op, rhs.build());
        let at = bindings(&values);
        if let Some(truth) = rel.eval(&at) {
            prop_assert_eq!(rel.simplify().eval(&at), Some(truth), "{} vs {}", rel, rel.simplify());
            prop_assert_eq!(rel.negate().eval(&at), Some(!truth));
            prop_assert_eq!(CompiledRel::new(&rel).eval(&values), Some(truth));
            if let Some(decided) = rel.decide_by_ranges(&|sym| ranges[sym.index()]) {
                prop_assert_eq!(decided, truth, "{} decided by ranges", rel);
            }
        }
    }

    #[test]
    fn affine_in_keeps_value(tree in tree(), width in 0i64..=12, (ranges, values) in ranged(-20..=20)) {
        // s0 is an index variable: it starts at 0 and its range is finite.
        let mut ranges = ranges;
        ranges[0] = ValueRange::new(Some(0), Some(width));
        let expr = tree.build();
        if let Some((coeff, rest)) = expr.affine_in(Sym(0), &|sym| ranges[sym.index()]) {
            prop_assert!(!rest.mentions(Sym(0)), "{} => rest {}", expr, rest);
            for v0 in 0..=width {
                let mut at = values;
                at[0] = v0;
                if let Some(expected) = expr.eval(&bindings(&at)) {
                    let split = rest.eval(&bindings(&at)).map(|r| coeff * v0 + r);
                    prop_assert_eq!(split, Some(expected), "{} = {}*s0 + {} at {:?}", expr, coeff, rest, at);
                }
            }
        }
    }

    #[test]
    fn equivalent_to_its_own_rewritings(tree in tree()) {
        let expr = tree.build();
        let rebuilt = RawExpr::from(&expr).simplify();
        prop_assert!(expr.is_equivalent(&rebuilt, &|_| ValueRange::at_least(2)));
    }
}
