//! The quiz's pseudo-random numbers: SplitMix64, small and fully determined by its seed.
//!
//! In: a seed (an exercise's seed mixed with its kind, difficulty and attempt). Out: integers,
//! picks and shuffles. Invariant: the same seed gives the same sequence on every platform
//! (native and wasm32), so a shared exercise URL replays exactly.

/// A SplitMix64 generator.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator for one attempt at one exercise; the parts are mixed so that nearby seeds
    /// give unrelated exercises.
    pub(crate) fn new(parts: &[u64]) -> Rng {
        let mut rng = Rng(0x5EED_7A11_0A5E_u64);
        for part in parts {
            rng.0 ^= part.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            rng.next_u64();
        }
        rng
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (`n > 0`); the modulo bias is far below what a quiz can notice.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0, "below(0) has no value to return");
        (self.next_u64() % n as u64) as usize
    }

    /// A value in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(lo <= hi, "empty range {lo}..={hi}");
        lo + self.below((hi - lo + 1) as usize) as i64
    }

    /// True with probability `num / den`.
    pub(crate) fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    /// One element of a non-empty slice.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Fisher–Yates.
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}
