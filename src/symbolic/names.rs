//! How symbols are named when shown: Tailor's `s0, s1, …` in creation order (the material's
//! naming, and PyTorch's up to 2.7), or PyTorch 2.8+'s, which derives a symbol's number from
//! its source (`L['x'].size()[0]` → `s77`).
//!
//! Sits between the shape environment, which knows each symbol's source, and every printer of
//! symbols. In: the sources of an environment's symbols, in creation order. Out: a
//! [`SymbolNames`]; while [`SymbolNames::show`] runs, `Sym`'s `Display` prints its names.
//! Invariant: naming is presentation only — a symbol's number (`Sym::index`, its slot in
//! bindings, its name in kernels) never changes, and the names shown are distinct, so a
//! printed expression stays unambiguous.

use super::Sym;
use sha2::{Digest, Sha256};
use std::cell::RefCell;

/// Which names symbols are shown with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolNaming {
    /// `s0, s1, …` in creation order (the material's naming; PyTorch ≤ 2.7).
    #[default]
    Tailor,
    /// PyTorch 2.8+'s: a hash of the symbol's source (`s77` for `L['x'].size()[0]`).
    PyTorch,
}

impl SymbolNaming {
    /// Both namings, as the CLI spells them.
    pub const ALL: [(&'static str, SymbolNaming); 2] = [
        ("tailor", SymbolNaming::Tailor),
        ("pytorch", SymbolNaming::PyTorch),
    ];

    /// The naming spelled `name` (`tailor` or `pytorch`).
    pub fn parse(name: &str) -> Option<SymbolNaming> {
        Self::ALL
            .iter()
            .find(|(spelling, _)| *spelling == name)
            .map(|(_, naming)| *naming)
    }
}

/// The number each symbol of one environment is shown with (`numbers[sym.index()]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolNames {
    /// Empty for Tailor's naming: every symbol is shown as its own number.
    numbers: Vec<u32>,
}

thread_local! {
    /// The names `Sym`'s `Display` uses while a [`SymbolNames::show`] runs on this thread.
    static SHOWN: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

impl SymbolNames {
    /// Tailor's naming: every symbol shown as its own number.
    pub fn tailor() -> Self {
        SymbolNames::default()
    }

    /// The names of symbols created for `sources` in this order, under `naming`.
    ///
    /// PyTorch's `ShapeEnv._generate_unique_id`: the SHA-256 of the source name as an integer,
    /// modulo 100, then the next number not yet taken in this environment.
    pub fn new<'a>(naming: SymbolNaming, sources: impl IntoIterator<Item = &'a str>) -> Self {
        if naming == SymbolNaming::Tailor {
            return SymbolNames::tailor();
        }
        let mut numbers: Vec<u32> = Vec::new();
        for source in sources {
            let digest = Sha256::digest(source.as_bytes());
            let mut number = digest
                .iter()
                .fold(0u32, |rest, byte| (rest * 256 + u32::from(*byte)) % 100);
            while numbers.contains(&number) {
                number += 1;
            }
            numbers.push(number);
        }
        SymbolNames { numbers }
    }

    /// The number `sym` is shown with.
    pub fn number(&self, sym: Sym) -> u32 {
        self.numbers.get(sym.index()).copied().unwrap_or(sym.0)
    }

    /// Runs `print` with `Sym`'s `Display` showing these names (nested calls restore the
    /// outer names when they return).
    pub fn show<R>(&self, print: impl FnOnce() -> R) -> R {
        /// Puts the outer names back, also when `print` unwinds.
        struct Restore(Vec<u32>);
        impl Drop for Restore {
            fn drop(&mut self) {
                SHOWN.with(|shown| *shown.borrow_mut() = std::mem::take(&mut self.0));
            }
        }
        let outer = SHOWN.with(|shown| shown.replace(self.numbers.clone()));
        let _restore = Restore(outer);
        print()
    }

    /// `text` (printed expressions only: no user identifiers) with every symbol renamed.
    pub fn rename(&self, text: &str) -> String {
        if self.numbers.is_empty() {
            return text.to_string();
        }
        super::print::rename_syms(text, &|n| Some(format!("s{}", self.number(Sym(n)))))
    }
}

/// The number `sym` is shown with under the names of the running [`SymbolNames::show`].
pub(super) fn shown_number(sym: Sym) -> u32 {
    SHOWN.with(|shown| shown.borrow().get(sym.index()).copied().unwrap_or(sym.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbolic::Expr;

    /// Measured on PyTorch 2.15 (pytorch-semantics.md §3.1).
    #[test]
    fn pytorch_names_hash_the_source() {
        let sources = ["L['x'].size()[0]", "L['x'].size()[1]", "L['y'].size()[0]"];
        let names = SymbolNames::new(SymbolNaming::PyTorch, sources);
        let shown: Vec<u32> = (0..3).map(|i| names.number(Sym(i))).collect();
        assert_eq!(shown, [77, 27, 17]);
    }

    #[test]
    fn a_taken_number_moves_to_the_next_free_one() {
        let names = SymbolNames::new(SymbolNaming::PyTorch, ["L['x'].size()[0]"; 3]);
        let shown: Vec<u32> = (0..3).map(|i| names.number(Sym(i))).collect();
        assert_eq!(shown, [77, 78, 79]);
    }

    #[test]
    fn show_prints_the_names_and_restores_the_outer_ones() {
        let expr = Expr::sym(Sym(0)) * Expr::sym(Sym(1)) + 1;
        let outer = SymbolNames::new(
            SymbolNaming::PyTorch,
            ["L['x'].size()[0]", "L['x'].size()[1]"],
        );
        let inner = SymbolNames::tailor();
        let (printed, nested) = outer.show(|| (expr.to_string(), inner.show(|| expr.to_string())));
        assert_eq!(printed, "s77*s27 + 1");
        assert_eq!(nested, "s0*s1 + 1");
        assert_eq!(expr.to_string(), "s0*s1 + 1");
    }

    #[test]
    fn rename_renames_symbols_only() {
        let names = SymbolNames::new(SymbolNaming::PyTorch, ["L['x'].size()[0]"]);
        assert_eq!(names.rename("(s0 - 3)//2 + s10"), "(s77 - 3)//2 + s10");
        assert_eq!(names.rename("s0"), "s77");
    }

    #[test]
    fn rename_touches_whole_symbol_tokens_only() {
        let renamed = crate::symbolic::rename_syms("s10 + s1*xs1 + s1", &|n| {
            (n == 1).then(|| "row".to_string())
        });
        assert_eq!(renamed, "s10 + row*xs1 + row");
    }
}
