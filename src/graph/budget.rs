//! The memory budget: how many bytes the tensors of a run may take, one setting for the
//! process (the CLI's `--memory-budget`, the JS API's `memoryBudget`).
//!
//! In: the budget in bytes, set before a model loads. Out: the largest tensor in elements
//! (every tensor is held as float32: 4 bytes an element) and the budget itself, read where
//! a tensor is made (module state in the front end, the CPU reference's values, a call's
//! inputs) and where the CPU backend sizes a call's buffers (their total). Invariant: a
//! tensor never holds more than 2^31 - 1 elements, whatever the budget, since kernels index
//! with 32-bit integers.

use std::sync::atomic::{AtomicU64, Ordering};

/// The budget a run starts with: 1 GiB in the browser (a tab's memory is shared with the
/// page and the GPU's staging copies), 8 GiB natively.
pub const DEFAULT_MEMORY_BUDGET: u64 = if cfg!(target_arch = "wasm32") {
    1 << 30
} else {
    8 << 30
};

/// The bytes of one element: every backend holds every dtype as float32.
const ELEMENT_BYTES: u64 = 4;

static BUDGET: AtomicU64 = AtomicU64::new(DEFAULT_MEMORY_BUDGET);

/// The budget in force, in bytes.
pub fn memory_budget() -> u64 {
    BUDGET.load(Ordering::Relaxed)
}

/// Sets the budget (at least one element's bytes).
pub fn set_memory_budget(bytes: u64) {
    BUDGET.store(bytes.max(ELEMENT_BYTES), Ordering::Relaxed);
}

/// The most elements one tensor may hold under the budget.
pub fn max_elements() -> usize {
    let by_budget = memory_budget() / ELEMENT_BYTES;
    usize::try_from(by_budget.min(i32::MAX as u64)).unwrap_or(i32::MAX as usize)
}

/// `elements` float32s in bytes.
pub fn bytes_of(elements: u128) -> u128 {
    elements.saturating_mul(u128::from(ELEMENT_BYTES))
}

/// A byte count as people read it: `1.5 GiB`, `384 MiB`, `12 KiB`, `100 bytes`.
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: [(&str, u128); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size {
            let value = bytes as f64 / size as f64;
            return if value.fract() == 0.0 {
                format!("{value:.0} {unit}")
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// `"512MiB"`, `"2GiB"`, `"2G"`, `"1e9"` or a plain byte count, as the CLI and the JS API
/// take a budget; `None` for anything else or zero.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" | "kb" => 1 << 10,
        "m" | "mib" | "mb" => 1 << 20,
        "g" | "gib" | "gb" => 1 << 30,
        _ => return None,
    };
    let value: f64 = number.trim().parse().ok()?;
    let bytes = value * scale as f64;
    (bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_as_people_write_them() {
        assert_eq!(parse_bytes("512MiB"), Some(512 << 20));
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes("1.5 GiB"), Some(3 << 29));
        assert_eq!(parse_bytes("1e9"), Some(1_000_000_000));
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("0"), None);
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("3 parsecs"), None);
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
        assert_eq!(human_bytes(384 << 20), "384 MiB");
        assert_eq!(human_bytes(100), "100 bytes");
    }
}
