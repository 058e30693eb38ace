//! Bounds on Python's integers, so that no single operation of the user's file runs for
//! longer than the step budget can see.
//!
//! Input: the `int` type's number slots for `**` and `<<`, shared by every interpreter of
//! the process. Output: the same slots, wrapped once per process: an operation whose result
//! would have more than `MAX_INT_BITS` bits raises `OverflowError` before it starts.
//! Invariant: every other operation is the original slot's, unchanged; the step budget
//! (`STEP_LIMIT` lines) counts lines, and a line is short only while its integers are.
//! `10 ** 2147483648` would otherwise compute for minutes inside one line, in the browser
//! too (the fuzzer found it); CPython bounds `str(int)` (`sys.set_int_max_str_digits`), which
//! RustPython does as well, but not arithmetic. `*` cannot be bounded here: RustPython's
//! adaptive interpreter multiplies two ints without the slot, so a product at most doubles
//! its operands' size per line and squaring in a loop grows with the loop.

use rustpython_vm::builtins::{PyBaseExceptionRef, PyInt};
use rustpython_vm::protocol::{PyNumberBinaryFunc, PyNumberTernaryFunc};
use rustpython_vm::{Py, PyObject, PyResult, VirtualMachine};
use std::sync::OnceLock;

/// The most bits an integer result may have: about 315,000 decimal digits, far beyond
/// any size, count or seed a model computes, and quick to compute with.
pub const MAX_INT_BITS: u64 = 1 << 20;

/// The slots as RustPython made them.
struct Original {
    power: PyNumberTernaryFunc,
    lshift: PyNumberBinaryFunc,
}

static ORIGINAL: OnceLock<Original> = OnceLock::new();

/// Wraps the `int` slots of `vm`'s types. The original slots are kept first, once per
/// process (before any slot is replaced, so that a wrapper never wraps itself), and only
/// then replaced: a call for another interpreter, or another thread, replaces the same.
pub fn install(vm: &VirtualMachine) {
    let slots = &vm.ctx.types.int_type.slots.as_number;
    ORIGINAL.get_or_init(|| Original {
        power: slots.power.load().expect("int has **"),
        lshift: slots.lshift.load().expect("int has <<"),
    });
    slots.power.store(Some(bounded_power));
    slots.right_power.store(Some(bounded_power));
    slots.lshift.store(Some(bounded_lshift));
    slots.right_lshift.store(Some(bounded_lshift));
}

fn original() -> &'static Original {
    ORIGINAL.get().expect("installed before any slot runs")
}

/// Both operands, when both are ints.
fn ints<'a>(a: &'a PyObject, b: &'a PyObject) -> Option<(&'a Py<PyInt>, &'a Py<PyInt>)> {
    Some((a.downcast_ref::<PyInt>()?, b.downcast_ref::<PyInt>()?))
}

/// A non-negative int's value, saturated (`u128::MAX` past `u64`).
fn magnitude(int: &Py<PyInt>, vm: &VirtualMachine) -> u128 {
    int.try_to_primitive::<u64>(vm)
        .map_or(u128::MAX, u128::from)
}

fn positive(int: &Py<PyInt>, vm: &VirtualMachine) -> bool {
    int.as_bigint() > vm.ctx.new_int(0).as_bigint()
}

fn too_large(vm: &VirtualMachine, what: &str, bits: u128) -> PyBaseExceptionRef {
    vm.new_overflow_error(format!(
        "{what} would have about {bits} bits: Tailor's Python bounds integers to 2**20 bits, so that no line runs for minutes"
    ))
}

fn bounded_power(a: &PyObject, b: &PyObject, modulus: &PyObject, vm: &VirtualMachine) -> PyResult {
    if let Some((base, exponent)) = ints(a, b) {
        let base_bits = base.as_bigint().bits();
        // |base| <= 1 stays small; a negative exponent gives a float; a modulus bounds it.
        if vm.is_none(modulus) && base_bits > 1 && positive(exponent, vm) {
            let result = u128::from(base_bits - 1).saturating_mul(magnitude(exponent, vm));
            if result > u128::from(MAX_INT_BITS) {
                return Err(too_large(vm, "int ** int", result));
            }
        }
    }
    (original().power)(a, b, modulus, vm)
}

fn bounded_lshift(a: &PyObject, b: &PyObject, vm: &VirtualMachine) -> PyResult {
    if let Some((value, shift)) = ints(a, b) {
        let value_bits = value.as_bigint().bits();
        if value_bits > 0 && positive(shift, vm) {
            let result = u128::from(value_bits).saturating_add(magnitude(shift, vm));
            if result > u128::from(MAX_INT_BITS) {
                return Err(too_large(vm, "int << int", result));
            }
        }
    }
    (original().lshift)(a, b, vm)
}
