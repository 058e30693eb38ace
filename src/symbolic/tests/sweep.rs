//! Exhaustive small-value sweeps of the floor-division and modulo rules: for every rule, a
//! family of expressions over divisors 1..=7 (and their negatives where the rule is about
//! signs), evaluated at every symbol value in -30..=30 before and after simplification.
//!
//! Invariant: each sweep also asserts that its rule fired, so it cannot pass vacuously.

use super::super::*;

const VALUES: std::ops::RangeInclusive<i64> = -30..=30;
const DIVISORS: std::ops::RangeInclusive<i64> = 1..=7;

/// Builds each text from `family`, checks that the simplified form agrees with the literal
/// tree at every binding of `s0` (and `s1` when `two_symbols`) in -30..=30 where the tree is
/// defined, and that `rule` fired at least once across the family.
fn sweep(rule: &str, family: &[String], two_symbols: bool) {
    let mut fired = false;
    for text in family {
        let raw: RawExpr = text.parse().unwrap_or_else(|err| panic!("{text}: {err}"));
        let (simplified, log) = raw.simplify_with_log();
        fired |= log.iter().any(|rewrite| rewrite.rule == rule);
        let second: Vec<i64> = if two_symbols {
            VALUES.collect()
        } else {
            vec![0]
        };
        for x in VALUES {
            for &y in &second {
                let bindings: Bindings = [(Sym(0), x), (Sym(1), y)].into_iter().collect();
                if let Some(expected) = raw.eval(&bindings) {
                    assert_eq!(
                        simplified.eval(&bindings),
                        Some(expected),
                        "{rule}: {text} => {simplified} at s0={x}, s1={y}"
                    );
                }
            }
        }
    }
    assert!(fired, "{rule} never fired in its sweep");
}

/// `make(c, k)` for every divisor `c` in 1..=7 and every `k` in `ks`.
fn family(ks: impl Iterator<Item = i64> + Clone, make: impl Fn(i64, i64) -> String) -> Vec<String> {
    DIVISORS
        .flat_map(|c| ks.clone().map(move |k| (c, k)))
        .map(|(c, k)| make(c, k))
        .collect()
}

#[test]
fn floordiv_const_sweep() {
    let texts: Vec<String> = VALUES
        .flat_map(|n| (-7..=7).map(move |c| format!("({n})//({c})")))
        .collect();
    sweep("floordiv-const", &texts, false);
}

#[test]
fn floordiv_one_sweep() {
    sweep(
        "floordiv-one",
        &family(-3..=3, |_, k| format!("({k}*s0 + s1)//1")),
        true,
    );
}

#[test]
fn floordiv_neg_divisor_sweep() {
    sweep(
        "floordiv-neg-divisor",
        &family(-5..=5, |c, k| format!("(s0 + {k})//(-{c})")),
        false,
    );
}

#[test]
fn floordiv_exact_sweep() {
    sweep(
        "floordiv-exact",
        &family(-3..=3, |c, k| format!("({c}*{k}*s0 + {c}*s1)//{c}")),
        true,
    );
}

#[test]
fn floordiv_bounded_sweep() {
    sweep(
        "floordiv-bounded",
        &family(1..=7, |c, d| format!("(s0 % {d})//{c}")),
        false,
    );
}

#[test]
fn floordiv_nested_sweep() {
    sweep(
        "floordiv-nested",
        &family(1..=7, |c, d| format!("(s0//{d})//{c}")),
        false,
    );
}

#[test]
fn floordiv_split_sweep() {
    let constants = family(VALUES, |c, r| format!("({c}*s0 + {r})//{c}"));
    sweep("floordiv-split", &constants, false);
    let symbolic = family(-2..=2, |c, k| format!("({c}*{k}*s0 + s1)//{c}"));
    sweep("floordiv-split", &symbolic, true);
    let by_symbol = family(-3..=3, |c, r| format!("(s1*s0*{c} + {r})//s1"));
    sweep("floordiv-split", &by_symbol, true);
}

#[test]
fn floordiv_gcd_sweep() {
    let texts = family(-5..=5, |c, r| format!("(2*s0 + 2*{r})//(2*{c})"));
    sweep("floordiv-gcd", &texts, false);
    let by_symbol = family(-2..=2, |c, k| format!("(s1*s0 + {k}*s1)//({c}*s1)"));
    sweep("floordiv-gcd", &by_symbol, true);
}

#[test]
fn mod_const_sweep() {
    let texts: Vec<String> = VALUES
        .flat_map(|n| (-7..=7).map(move |c| format!("({n}) % ({c})")))
        .collect();
    sweep("mod-const", &texts, false);
}

#[test]
fn mod_one_sweep() {
    sweep(
        "mod-one",
        &family(-3..=3, |_, k| format!("({k}*s0 + s1) % 1")),
        true,
    );
}

#[test]
fn mod_neg_divisor_sweep() {
    sweep(
        "mod-neg-divisor",
        &family(-5..=5, |c, k| format!("(s0 + {k}) % (-{c})")),
        false,
    );
}

#[test]
fn mod_of_multiple_sweep() {
    sweep(
        "mod-of-multiple",
        &family(-3..=3, |c, k| format!("({c}*{k}*s0 + {c}*s1) % {c}")),
        true,
    );
}

#[test]
fn mod_bounded_sweep() {
    sweep(
        "mod-bounded",
        &family(1..=7, |c, d| format!("(s0 % {d}) % {c}")),
        false,
    );
}

#[test]
fn mod_nested_sweep() {
    sweep(
        "mod-nested",
        &family(1..=4, |c, k| format!("(s0 % ({c}*{k})) % {c}")),
        false,
    );
}

#[test]
fn mod_split_sweep() {
    let constants = family(VALUES, |c, r| format!("({c}*s0 + {r}) % {c}"));
    sweep("mod-split", &constants, false);
    let coefficients = family(-9..=9, |c, k| format!("({k}*s0 + s1 + 11) % {c}"));
    sweep("mod-split", &coefficients, true);
    let by_symbol = family(-3..=3, |c, r| format!("(s1*s0*{c} + {r}) % s1"));
    sweep("mod-split", &by_symbol, true);
}

#[test]
fn mod_gcd_sweep() {
    let texts = family(-5..=5, |c, r| format!("(2*s0 + 2*{r}) % (2*{c})"));
    sweep("mod-gcd", &texts, false);
    let by_symbol = family(-2..=2, |c, k| format!("(s1*s0 + {k}*s1) % ({c}*s1)"));
    sweep("mod-gcd", &by_symbol, true);
}

/// The range-aware rules under every range `[lo, hi]` inside -30..=30 of width up to 10:
/// the range-simplified form agrees with the literal tree at every value in the range.
#[test]
fn range_aware_rules_sweep() {
    let mut fired = std::collections::BTreeSet::new();
    for c in DIVISORS {
        let texts = [
            format!("s0//{c}"),
            format!("s0 % {c}"),
            format!("(s0 + {c}) % {c}"),
            format!("Max({c}, s0)"),
            format!("Min(s0 - {c}, 3)"),
            format!("(s0 - {c})//(s0 + 31)"),
        ];
        for text in &texts {
            let raw: RawExpr = text.parse().unwrap_or_else(|err| panic!("{text}: {err}"));
            let tree = raw.simplify();
            for lo in (-30..=30).step_by(3) {
                for hi in lo..=(lo + 10).min(30) {
                    let range = ValueRange::new(Some(lo), Some(hi));
                    let (simplified, log) = tree.simplify_in_with_log(&|_| range);
                    fired.extend(log.iter().map(|rewrite| rewrite.rule));
                    for x in lo..=hi {
                        let bindings: Bindings = [(Sym(0), x)].into_iter().collect();
                        if let Some(expected) = raw.eval(&bindings) {
                            assert_eq!(
                                simplified.eval(&bindings),
                                Some(expected),
                                "{text} in {range} => {simplified} at s0={x}"
                            );
                        }
                    }
                }
            }
        }
    }
    for rule in [
        "floordiv-bounded",
        "mod-bounded",
        "max-by-range",
        "min-by-range",
        "sym-singleton",
    ] {
        assert!(fired.contains(rule), "{rule} never fired: {fired:?}");
    }
}
