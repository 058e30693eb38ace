//! The native half of `math` (`_math`): the functions of one or two floats that model files
//! and scripts use (`math.sqrt(d_head)`, `math.log(10000.0)`, `math.log2(size)`), each as
//! CPython's `math` computes it on an `f64`. `py/math.py` adds the rest in Python (integer
//! functions, `prod`, `isclose`, …). The VM alone has no `math`, and RustPython's standard
//! library registers sixty modules at once.
//!
//! In: Python numbers (a `SymInt` through its `__float__`, which specialises it). Out:
//! floats, or ints for `floor`/`ceil`/`trunc`. Invariant: no function here panics; a domain
//! error is Python's `ValueError`, as CPython raises it.

use rustpython_vm::pymodule;

#[pymodule(name = "_math")]
pub(super) mod native_math {
    use rustpython_vm::function::{ArgIntoFloat, OptionalArg};
    use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

    #[pyattr(name = "pi")]
    const PI: f64 = std::f64::consts::PI;
    #[pyattr(name = "e")]
    const E: f64 = std::f64::consts::E;
    #[pyattr(name = "tau")]
    const TAU: f64 = std::f64::consts::TAU;
    #[pyattr(name = "inf")]
    const INFINITY: f64 = f64::INFINITY;
    #[pyattr(name = "nan")]
    const NAN: f64 = f64::NAN;

    /// `x` where `valid`, else CPython's `ValueError: math domain error`.
    fn in_domain(x: f64, valid: bool, vm: &VirtualMachine) -> PyResult<f64> {
        if valid {
            Ok(x)
        } else {
            Err(vm.new_value_error("math domain error"))
        }
    }

    #[pyfunction]
    fn sqrt(x: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<f64> {
        let x = x.into_float();
        in_domain(x.sqrt(), x >= 0.0 || x.is_nan(), vm)
    }

    #[pyfunction]
    fn exp(x: ArgIntoFloat) -> f64 {
        x.into_float().exp()
    }

    #[pyfunction]
    fn expm1(x: ArgIntoFloat) -> f64 {
        x.into_float().exp_m1()
    }

    /// `log(x)` or `log(x, base)`.
    #[pyfunction]
    fn log(x: ArgIntoFloat, base: OptionalArg<ArgIntoFloat>, vm: &VirtualMachine) -> PyResult<f64> {
        let x = x.into_float();
        let ln = in_domain(x.ln(), x > 0.0 || x.is_nan(), vm)?;
        match base {
            OptionalArg::Present(base) => {
                let base = base.into_float();
                let ln_base = in_domain(base.ln(), base > 0.0 || base.is_nan(), vm)?;
                if ln_base == 0.0 {
                    return Err(vm.new_zero_division_error("float division by zero"));
                }
                Ok(ln / ln_base)
            }
            OptionalArg::Missing => Ok(ln),
        }
    }

    #[pyfunction]
    fn log2(x: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<f64> {
        let x = x.into_float();
        in_domain(x.log2(), x > 0.0 || x.is_nan(), vm)
    }

    #[pyfunction]
    fn log10(x: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<f64> {
        let x = x.into_float();
        in_domain(x.log10(), x > 0.0 || x.is_nan(), vm)
    }

    #[pyfunction]
    fn log1p(x: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<f64> {
        let x = x.into_float();
        in_domain(x.ln_1p(), x > -1.0 || x.is_nan(), vm)
    }

    #[pyfunction]
    fn pow(x: ArgIntoFloat, y: ArgIntoFloat) -> f64 {
        x.into_float().powf(y.into_float())
    }

    #[pyfunction]
    fn sin(x: ArgIntoFloat) -> f64 {
        x.into_float().sin()
    }

    #[pyfunction]
    fn cos(x: ArgIntoFloat) -> f64 {
        x.into_float().cos()
    }

    #[pyfunction]
    fn tan(x: ArgIntoFloat) -> f64 {
        x.into_float().tan()
    }

    #[pyfunction]
    fn asin(x: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<f64> {
        let x = x.into_float();
        in_domain(x.asin(), x.abs() <= 1.0 || x.is_nan(), vm)
    }

    #[pyfunction]
    fn acos(x: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<f64> {
        let x = x.into_float();
        in_domain(x.acos(), x.abs() <= 1.0 || x.is_nan(), vm)
    }

    #[pyfunction]
    fn atan(x: ArgIntoFloat) -> f64 {
        x.into_float().atan()
    }

    #[pyfunction]
    fn atan2(y: ArgIntoFloat, x: ArgIntoFloat) -> f64 {
        y.into_float().atan2(x.into_float())
    }

    #[pyfunction]
    fn sinh(x: ArgIntoFloat) -> f64 {
        x.into_float().sinh()
    }

    #[pyfunction]
    fn cosh(x: ArgIntoFloat) -> f64 {
        x.into_float().cosh()
    }

    #[pyfunction]
    fn tanh(x: ArgIntoFloat) -> f64 {
        x.into_float().tanh()
    }

    #[pyfunction]
    fn hypot(x: ArgIntoFloat, y: ArgIntoFloat) -> f64 {
        x.into_float().hypot(y.into_float())
    }

    #[pyfunction]
    fn copysign(x: ArgIntoFloat, y: ArgIntoFloat) -> f64 {
        x.into_float().copysign(y.into_float())
    }

    #[pyfunction]
    fn fmod(x: ArgIntoFloat, y: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<f64> {
        let (x, y) = (x.into_float(), y.into_float());
        in_domain(x % y, y != 0.0 || x.is_nan() || y.is_nan(), vm)
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

    /// `x` rounded by `round`, as a Python int (CPython's `floor`, `ceil` and `trunc` of a
    /// float); an infinity or a NaN is CPython's error.
    fn to_int(x: f64, round: fn(f64) -> f64, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
        if x.is_nan() {
            return Err(vm.new_value_error("cannot convert float NaN to integer"));
        }
        if x.is_infinite() {
            return Err(vm.new_overflow_error("cannot convert float infinity to integer"));
        }
        let rounded = round(x);
        match whole_i64(rounded) {
            Some(int) => Ok(vm.ctx.new_int(int).into()),
            None => Err(vm.new_overflow_error("integer too large")),
        }
    }

    /// A whole float as an `i64`, where it fits.
    fn whole_i64(x: f64) -> Option<i64> {
        (x >= i64::MIN as f64 && x < i64::MAX as f64).then_some(x as i64)
    }

    #[pyfunction]
    fn floor(x: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
        to_int(x.into_float(), f64::floor, vm)
    }

    #[pyfunction]
    fn ceil(x: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
        to_int(x.into_float(), f64::ceil, vm)
    }

    #[pyfunction]
    fn trunc(x: ArgIntoFloat, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
        to_int(x.into_float(), f64::trunc, vm)
    }
}
