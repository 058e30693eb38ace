//! A native `math` module with only what model files and scripts use (`math.sqrt(d_head)`,
//! the tests of `torch`'s tensor printing): the VM
//! alone has no `math`, and RustPython's standard library registers sixty modules at once.
//!
//! Input: Python numbers. Output: `f64` results, as CPython's `math` computes them.

use rustpython_vm::pymodule;

#[pymodule(name = "math")]
pub(super) mod native_math {
    use rustpython_vm::function::ArgIntoFloat;
    use rustpython_vm::{PyObjectRef, VirtualMachine};

    #[pyattr(name = "pi")]
    const PI: f64 = std::f64::consts::PI;
    #[pyattr(name = "e")]
    const E: f64 = std::f64::consts::E;
    #[pyattr(name = "inf")]
    const INFINITY: f64 = f64::INFINITY;
    #[pyattr(name = "nan")]
    const NAN: f64 = f64::NAN;

    #[pyfunction]
    fn sqrt(x: ArgIntoFloat) -> f64 {
        x.into_float().sqrt()
    }

    #[pyfunction]
    fn exp(x: ArgIntoFloat) -> f64 {
        x.into_float().exp()
    }

    #[pyfunction]
    fn log(x: ArgIntoFloat) -> f64 {
        x.into_float().ln()
    }

    #[pyfunction]
    fn isfinite(x: ArgIntoFloat) -> bool {
        x.into_float().is_finite()
    }

    #[pyfunction]
    fn isnan(x: ArgIntoFloat) -> bool {
        x.into_float().is_nan()
    }

    #[pyfunction]
    fn isinf(x: ArgIntoFloat) -> bool {
        x.into_float().is_infinite()
    }

    #[pyfunction]
    fn fabs(x: ArgIntoFloat) -> f64 {
        x.into_float().abs()
    }

    #[pyfunction]
    fn floor(x: ArgIntoFloat, vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx.new_int(x.into_float().floor() as i64).into()
    }

    #[pyfunction]
    fn ceil(x: ArgIntoFloat, vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx.new_int(x.into_float().ceil() as i64).into()
    }
}
