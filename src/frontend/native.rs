//! The native module `_tailor`: the tensor and size proxies of the Python front end, and the
//! calls through which the frozen `torch` package builds the graph.
//!
//! Input: calls from `py/torch` with Python arguments. Output: new proxies (a `Tensor` per
//! graph node, a `SymInt` per symbolic size, a `SymBool` per comparison of sizes), nodes
//! appended through `frontend::ops` (the shape rules and graph building), and guards recorded in the capture's `ShapeEnv`. A `FrontendError` is raised
//! into Python as `TailorError` and kept in the session, so that capture reports the
//! error itself when Python gives up.
//! Invariant: every node and guard carries the span of the innermost frame of the user's
//! file, and a size is decided only through `ShapeEnv::evaluate`.

use rustpython_vm::pymodule;

#[pymodule]
pub(super) mod _tailor {
    use super::super::call::Call;
    use crate::frontend::breaks::BreakReason;

    use crate::frontend::host::{DimMark, Output, SCRIPT_TIME_LIMIT_MS, Stream};
    use crate::frontend::objects::{Classes, Session, SymBoolBase, SymIntBase, TensorBase};
    use crate::frontend::ops::TensorRef;
    use crate::frontend::source::FILE_NAME;
    use crate::frontend::table;
    use crate::graph::{DType, Init, RandomKind};
    use crate::shape::rules;
    use crate::symbolic::{CmpOp, Expr, Rel};
    use rustpython_vm::builtins::{PyCode, PyDictRef, PyStr, PyTypeRef, PyUtf8StrRef};
    use rustpython_vm::class::PyClassImpl;
    use rustpython_vm::function::{ArgIntoFloat, FuncArgs, KwArgs};
    use rustpython_vm::{
        AsObject, Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass,
    };

    /// How many lines of the user's file one run (the module level, or one capture) may
    /// execute: far more than any model's `__init__` and `forward` take, and, in the
    /// browser, a few seconds of an endless loop.
    pub const STEP_LIMIT: u64 = 200_000;

    #[pyclass]
    impl Session {
        /// The trace function of a run (`sys.settrace`'s protocol) that bounds how much of
        /// the user's Python it executes: frames of the user's file trace their lines, and
        /// each line is a step of `STEP_LIMIT`. Frames of the `torch` package and the
        /// stdlib are not traced (their loops are bounded by the user's sizes and calls).
        /// While forward runs, the user's frames' starts and returns go to
        /// `Call::frame_event`.
        #[pymethod]
        fn trace(
            zelf: &Py<Self>,
            frame: PyObjectRef,
            event: PyUtf8StrRef,
            arg: PyObjectRef,
            vm: &VirtualMachine,
        ) -> PyResult {
            let tracer = || {
                zelf.tracer
                    .borrow()
                    .clone()
                    .unwrap_or_else(|| vm.ctx.none())
            };
            match event.as_str() {
                "call" if !is_user_frame(&frame, vm) => Ok(vm.ctx.none()),
                // A run of forward watches the calls its frame makes (graph breaks inside
                // them end its graph at the call).
                "call" | "return" if zelf.forward.borrow().is_some() => {
                    Call::run(vm, |call| {
                        call.frame_event(&frame, event.as_str(), &arg)?;
                        Ok(vm.ctx.none())
                    })?;
                    Ok(tracer())
                }
                "line" => {
                    let steps = zelf.steps.get() + 1;
                    zelf.steps.set(steps);
                    if steps > STEP_LIMIT {
                        return Call::run(vm, |call| Err(call.budget_exceeded(STEP_LIMIT)));
                    }
                    if steps.is_multiple_of(1024) && zelf.past_deadline() {
                        return Call::run(vm, |call| {
                            Err(call.time_exceeded(SCRIPT_TIME_LIMIT_MS / 1e3))
                        });
                    }
                    Ok(tracer())
                }
                _ => Ok(tracer()),
            }
        }
    }

    #[pyattr]
    fn session(vm: &VirtualMachine) -> PyRef<Session> {
        // The class first: the module's attributes are made in no set order.
        let _class = Session::make_static_type();
        Session::default().into_ref(&vm.ctx)
    }

    #[pyattr(name = "Session")]
    fn session_class(_vm: &VirtualMachine) -> PyTypeRef {
        Session::make_static_type()
    }

    #[pyattr(name = "TensorBase")]
    fn tensor_base_class(_vm: &VirtualMachine) -> PyTypeRef {
        TensorBase::make_static_type()
    }

    #[pyattr(name = "SymIntBase")]
    fn sym_int_base_class(_vm: &VirtualMachine) -> PyTypeRef {
        SymIntBase::make_static_type()
    }

    #[pyattr(name = "SymBoolBase")]
    fn sym_bool_base_class(_vm: &VirtualMachine) -> PyTypeRef {
        SymBoolBase::make_static_type()
    }

    #[pyfunction]
    fn register(
        tensor: PyTypeRef,
        symint: PyTypeRef,
        symbool: PyTypeRef,
        symfloat: PyTypeRef,
        error: PyTypeRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let session = Call::session(vm)?;
        *session.classes.borrow_mut() = Some(Classes {
            tensor,
            symint,
            symbool,
            symfloat,
            error,
        });
        Ok(())
    }

    // ---- script mode ---------------------------------------------------------------------

    /// `torch.compile(target, dynamic=…, recompile_limit=…, backend=…)` in a script: the
    /// new wrapper's id; `settings` is what else PyTorch compares of two wrappers' backends
    /// (the callable, `mode=`, `options=`), as text.
    #[pyfunction]
    fn compile(
        target: PyObjectRef,
        dynamic: PyObjectRef,
        recompile_limit: PyObjectRef,
        backend: PyObjectRef,
        settings: String,
        vm: &VirtualMachine,
    ) -> PyResult<usize> {
        crate::frontend::script::compile(
            vm,
            &target,
            &dynamic,
            &recompile_limit,
            &backend,
            &settings,
        )
    }

    /// A call of compiled wrapper `wrapper` with `args`; `trainable` is `None` under
    /// `torch.no_grad()`, else the paths of the module's parameters that require grad.
    #[pyfunction]
    fn call_compiled(
        wrapper: usize,
        args: Vec<PyObjectRef>,
        trainable: Option<Vec<String>>,
        vm: &VirtualMachine,
    ) -> PyResult {
        crate::frontend::script::call_compiled(vm, wrapper, &args, trainable)
    }

    /// The argument names of compiled wrapper `wrapper`'s function, in order: a call's
    /// keyword arguments are bound to them.
    #[pyfunction]
    fn compiled_inputs(wrapper: usize, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            let names = crate::frontend::script::compiled_inputs(call, wrapper)?;
            Ok(vm
                .ctx
                .new_list(
                    names
                        .into_iter()
                        .map(|n| vm.ctx.new_str(n).into())
                        .collect(),
                )
                .into())
        })
    }

    /// Counts a tensor op that Python answered without a node (`x.clone()`, a pad by zero,
    /// `x.to(device)`): Dynamo's graph has a call for it, so its trace is not empty.
    #[pyfunction]
    fn record_call(vm: &VirtualMachine) -> PyResult<()> {
        Call::run_with(vm, |call| {
            call.record_call();
            Ok(())
        })
    }

    /// The dims a compiled call stamped dynamic on `tensor`
    /// (`_dynamo_propagated_dynamic_indices`), in order; empty where none did.
    #[pyfunction]
    fn propagated_dims(tensor: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
        let dims = tensor
            .downcast_ref::<TensorBase>()
            .map(|proxy| {
                let mut dims: Vec<usize> = proxy
                    .marks
                    .borrow()
                    .iter()
                    .filter_map(|mark| match *mark {
                        DimMark::Propagated { dim } => Some(dim),
                        _ => None,
                    })
                    .collect();
                dims.sort_unstable();
                dims
            })
            .unwrap_or_default();
        let dims = dims.into_iter().map(|d| vm.ctx.new_int(d).into()).collect();
        vm.ctx.new_list(dims).into()
    }

    /// `torch._logging.set_logs(...)` in a script.
    #[pyfunction]
    fn set_logs(
        recompiles: bool,
        guards: bool,
        dynamic: bool,
        graph_breaks: bool,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let logs = crate::config::Logs {
            recompiles,
            guards,
            dynamic,
            graph_breaks,
        };
        crate::frontend::script::with_host(vm, "torch._logging.set_logs", |host| {
            host.set_logs(logs)
        })
    }

    /// `torch._dynamo.reset()` in a script.
    #[pyfunction]
    fn reset(vm: &VirtualMachine) -> PyResult<()> {
        crate::frontend::script::with_host(vm, "torch._dynamo.reset", |host| host.reset())
    }

    /// `torch._dynamo.mark_dynamic(x, dim, min, max)` (`dynamic`) or `mark_static(x, dim)`.
    #[pyfunction]
    fn mark(
        tensor: PyObjectRef,
        dynamic: bool,
        dim: PyObjectRef,
        min: PyObjectRef,
        max: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        crate::frontend::script::mark(vm, &tensor, dynamic, &dim, &min, &max)
    }

    /// The values of a script's tensor, flat and row-major (`item()`, `tolist()`, `float()`).
    #[pyfunction]
    fn values(x: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            // The proxy's own tensor: after a graph break it is a value Python read there
            // (`x.item()`), not an input of the graph that starts at the break.
            let proxy = x.downcast_ref::<TensorBase>().ok_or_else(|| {
                call.type_error(format!("expected a Tensor, got {}", call.type_name(&x)))
            })?;
            let tensor = match proxy.tensor() {
                TensorRef::Value(value, _) => crate::graph::Tensor::clone(&value),
                TensorRef::Const(constant) if call.is_eager() => constant.observed(),
                // A constant this forward made from its own data (`torch.tensor([2])`): its
                // values are fixed, as a fake tensor keeps a small constant's values.
                TensorRef::Const(constant)
                    if !constant.is_param
                        && constant.made_in != 0
                        && Some(constant.made_in) == call.capture_number() =>
                {
                    constant.observed()
                }
                _ => {
                    return Err(call.unsupported(
                        "reading a value of a tensor of forward outside a run of forward",
                        "a graph tensor was kept after forward returned",
                    ));
                }
            };
            let values = tensor
                .data
                .iter()
                .map(|&v| vm.ctx.new_float(f64::from(v)).into())
                .collect();
            Ok(vm.ctx.new_list(values).into())
        })
    }

    /// `x.item()`: the value of a one-element tensor. Inside forward, a graph break
    /// (Dynamo's `capture_scalar_outputs=False`) whose float goes back to Python on its
    /// stack: a plain float, or, where the graph after the break makes it a symbol, a
    /// `SymFloat`.
    #[pyfunction]
    fn item(x: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            let value = match value_of(call, &x) {
                Some(tensor) if tensor.data.len() == 1 => Some(f64::from(tensor.data[0])),
                Some(tensor) => {
                    return Err(call.type_error(format!(
                        "RuntimeError: a Tensor with {} elements cannot be converted to Scalar",
                        tensor.data.len()
                    )));
                }
                None => None,
            };
            let reason = BreakReason::Value {
                method: "item".into(),
            };
            if let Some(symbol) = call.graph_break(reason, Some(&x), None, value)? {
                return Ok(symbol);
            }
            match value {
                Some(value) => Ok(vm.ctx.new_float(value).into()),
                None => Err(call.unsupported(
                    "reading a value of a tensor of forward outside a run of forward",
                    "a graph tensor was kept after forward returned",
                )),
            }
        })
    }

    /// `x.tolist()`: inside a run of forward a graph break whose list goes back to Python
    /// on its stack (`Call::graph_break_list`): returns the flat items to hand Python, or
    /// `None`, where Python reads the values as ever (outside forward, a script's tensor's).
    #[pyfunction]
    fn tolist_break(x: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            let integer = !call.proxy_dtype(&x)?.is_floating();
            let values = value_of(call, &x);
            let items = call.graph_break_list(&x, integer, values.as_ref().map(|t| &t.data[..]))?;
            Ok(match items {
                Some(items) => vm.ctx.new_list(items).into(),
                None => vm.ctx.none(),
            })
        })
    }

    /// A tensor's values when it has them now (a computed value; a constant outside
    /// forward): the proxy's own tensor, never an input of a graph after a break.
    fn value_of(call: &Call<'_>, x: &PyObjectRef) -> Option<crate::graph::Tensor> {
        match &x.downcast_ref::<TensorBase>()?.tensor() {
            TensorRef::Value(value, _) => Some(crate::graph::Tensor::clone(value)),
            TensorRef::Const(constant) if call.is_eager() => Some(constant.observed()),
            _ => None,
        }
    }

    /// `print(*args)`: inside forward, a graph break (Dynamo cannot trace the builtin).
    #[pyfunction]
    fn print_break(args: Vec<PyObjectRef>, vm: &VirtualMachine) -> PyResult<()> {
        Call::run_with(vm, |call| {
            let arg_types = args
                .iter()
                .map(|arg| match call.type_name(arg).as_str() {
                    "tuple" if arg.class().name().to_string() == "Size" => "Size".to_string(),
                    name => name.to_string(),
                })
                .collect();
            call.graph_break(BreakReason::Print { arg_types }, None, None, None)
                .map(drop)
        })
    }

    /// `module(*args, **kwargs)` for an `nn.RNN`, `nn.GRU` or `nn.LSTM`, whose `forward` is
    /// `function`: inside forward, a graph break around the call (Dynamo's default
    /// `allow_rnn=False`), which runs eagerly and hands what it returned to the graph after
    /// it; elsewhere, the call.
    #[pyfunction]
    fn call_break(
        module: PyObjectRef,
        function: PyObjectRef,
        args: Vec<PyObjectRef>,
        kwargs: PyDictRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        Call::run(vm, |call| {
            let run = || {
                let kwargs: KwArgs = kwargs
                    .clone()
                    .into_iter()
                    .filter_map(|(key, value)| {
                        let key = key.downcast_ref::<PyStr>()?.to_string_lossy().into_owned();
                        Some((key, value))
                    })
                    .collect();
                function.call(FuncArgs::new(args.clone(), kwargs), vm)
            };
            let in_forward = call.session_ref().forward.borrow().is_some();
            if !in_forward {
                return Ok(run()?);
            }
            let reason = BreakReason::Rnn {
                source: call.module_source(&module),
            };
            call.call_break(reason, &args, &run)
        })
    }

    /// `f op other` for a symbolic float argument `f` and a number: decided on the traced
    /// value, the relation that held recorded as a guard.
    #[pyfunction]
    fn sym_float_compare(
        f: PyObjectRef,
        op: PyUtf8StrRef,
        other: f64,
        vm: &VirtualMachine,
    ) -> PyResult<bool> {
        Call::run_with(vm, |call| {
            let op = match op.as_str() {
                "gt" => CmpOp::Gt,
                "ge" => CmpOp::Ge,
                "lt" => CmpOp::Lt,
                "le" => CmpOp::Le,
                "eq" => CmpOp::Eq,
                _ => CmpOp::Ne,
            };
            call.decide_float(&f, op, other)
        })
    }

    /// `float(f)` of a symbolic float argument: its traced value, guarded to stay it.
    #[pyfunction]
    fn sym_float_specialize(f: PyObjectRef, vm: &VirtualMachine) -> PyResult<f64> {
        Call::run_with(vm, |call| call.specialize_float(&f))
    }

    /// Whether `values` can read `x`: a script's computed tensor, or a constant in a script.
    #[pyfunction]
    fn has_values(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
        Call::run_with(vm, |call| {
            Ok(match &x.downcast_ref::<TensorBase>().map(|t| t.tensor()) {
                Some(TensorRef::Value(..)) => true,
                Some(TensorRef::Const(_)) => call.is_eager(),
                _ => false,
            })
        })
    }

    /// `time.perf_counter()` in a script: seconds on the run's clock (the VM's own reads
    /// the system time, which a browser's wasm32 does not have).
    #[pyfunction]
    fn perf_counter(vm: &VirtualMachine) -> PyResult<f64> {
        let session = Call::session(vm)?;
        let clock = session.clock.borrow();
        let clock = clock
            .as_ref()
            .ok_or_else(|| vm.new_runtime_error("time.perf_counter outside a script"))?;
        Ok(clock() / 1e3)
    }

    /// What a script writes to `sys.stdout` (`stream` "stdout") or `sys.stderr`.
    #[pyfunction]
    fn write(stream: PyUtf8StrRef, text: PyUtf8StrRef, vm: &VirtualMachine) -> PyResult<()> {
        let stream = match stream.as_str() {
            "stdout" => Stream::Stdout,
            _ => Stream::Stderr,
        };
        let session = Call::session(vm)?;
        if let Some(run) = session.forward.borrow_mut().as_mut() {
            // A probe keeps its output for the caller to place between the graphs' logs;
            // a replay that only traces drops it (the probe printed it).
            if run.target.is_none() {
                let passed = run.points.len();
                run.printed.push((
                    passed,
                    Output {
                        stream,
                        text: text.as_str().to_string(),
                    },
                ));
            }
            if run.target.is_none() || run.mute {
                return Ok(());
            }
        }
        session.write(stream, text.as_str());
        Ok(())
    }

    // ---- constants -----------------------------------------------------------------------

    fn init_of(kind: &str, value: f64) -> Option<Init> {
        Some(match kind {
            "normal" => Init::Normal { std: value },
            "unit" => Init::Unit,
            "fill" => Init::Fill(value),
            "arange" => Init::Arange {
                start: 0.0,
                step: 1.0,
            },
            // `nn.Linear`/`nn.Conv*`: uniform in ±1/sqrt(fan_in), `value` being fan_in.
            "uniform" => Init::Uniform {
                bound: 1.0 / value.max(1.0).sqrt(),
            },
            // `nn.init.uniform_(t, -b, b)`, `xavier_uniform_`: uniform in ±value.
            "bounded" => Init::Uniform { bound: value },
            // `nn.init.orthogonal_(t, gain)`.
            "orthogonal" => Init::Orthogonal { gain: value },
            _ => return None,
        })
    }

    fn make_constant(
        sizes: Vec<PyObjectRef>,
        kind: PyUtf8StrRef,
        value: ArgIntoFloat,
        is_param: bool,
        vm: &VirtualMachine,
    ) -> PyResult {
        Call::run(vm, |call| {
            let value = value.into_float();
            let random = match kind.as_str() {
                "normal" if value == 1.0 => Some(RandomKind::Normal),
                "unit" => Some(RandomKind::Unit),
                _ => None,
            };
            if call.is_capturing() && (kind.as_str() == "fill" || random.is_some()) {
                // `torch.ones(t, t)`, `torch.randn_like(x)` in forward: sizes of the capture
                // make a node; a draw is always one, as in PyTorch's graph.
                let shape: Vec<Expr> = call
                    .sizes(&sizes)?
                    .into_iter()
                    .map(|size| size.ok_or_else(|| call.type_error("a size of -1 in a new tensor")))
                    .collect::<Result<_, _>>()?;
                if let Some(kind) = random {
                    return call.tensor_op(|ops, span| ops.random(kind, shape, span));
                }
                if shape.iter().any(|d| d.as_int().is_none()) {
                    return call.tensor_op(|ops, span| ops.full(value, shape, span));
                }
            }
            let shape = call.static_sizes(&sizes)?;
            let init = init_of(kind.as_str(), value)
                .ok_or_else(|| call.type_error(format!("unknown fill '{}'", kind.as_str())))?;
            call.new_constant(shape, init, is_param, DType::Float32)
        })
    }

    #[pyfunction]
    fn constant(
        sizes: Vec<PyObjectRef>,
        kind: PyUtf8StrRef,
        value: ArgIntoFloat,
        vm: &VirtualMachine,
    ) -> PyResult {
        make_constant(sizes, kind, value, false, vm)
    }

    #[pyfunction]
    fn parameter(
        sizes: Vec<PyObjectRef>,
        kind: PyUtf8StrRef,
        value: ArgIntoFloat,
        vm: &VirtualMachine,
    ) -> PyResult {
        make_constant(sizes, kind, value, true, vm)
    }

    /// `nn.init.*_(t, …)`: `t`'s fill becomes `kind`/`value` (as for `constant`) in place,
    /// as PyTorch's initialisers overwrite the tensor the module holds; returns `t`.
    #[pyfunction]
    fn set_init(
        tensor: PyObjectRef,
        kind: PyUtf8StrRef,
        value: ArgIntoFloat,
        vm: &VirtualMachine,
    ) -> PyResult {
        Call::run(vm, |call| {
            match call.tensor(&tensor)? {
            TensorRef::Const(c) => {
                let init = init_of(kind.as_str(), value.into_float())
                    .ok_or_else(|| call.type_error(format!("unknown fill '{}'", kind.as_str())))?;
                *c.init.borrow_mut() = init;
                Ok(tensor.clone())
            }
            TensorRef::Node(_) | TensorRef::Value(..) => Err(call.type_error(
                "nn.init needs a tensor made by torch.randn/zeros/ones or a module, got a computed Tensor",
            )),
        }
        })
    }

    /// An in-place op (`x.add_(y)`, `x[i] = v`): `dst` holds `src`, the op's out-of-place
    /// result cast to `dst`'s dtype, from now on (`Call::rebind`); `op` names it. Returns
    /// `dst`.
    #[pyfunction]
    fn rebind(
        dst: PyObjectRef,
        src: PyObjectRef,
        op: PyUtf8StrRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        Call::run(vm, |call| call.rebind(&dst, &src, op.as_str()))
    }

    /// `nn.Parameter(t)` and buffers: a new module-state constant with `t`'s shape and fill.
    #[pyfunction]
    fn as_state(data: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| match call.tensor(&data)? {
            TensorRef::Const(c) => {
                let init = c.init.borrow().clone();
                call.new_constant(c.shape.clone(), init, true, c.dtype)
            }
            // A tensor computed outside forward (nanoGPT's mask): state holding its values.
            TensorRef::Value(v, dtype) => {
                let shape = v.shape.iter().map(|&d| d as i64).collect();
                call.new_constant(shape, Init::Data(v.data.clone().into()), true, dtype)
            }
            TensorRef::Node(_) => Err(call.type_error(
                "nn.Parameter and buffers need a tensor made outside forward, got a graph Tensor",
            )),
        })
    }

    /// `copy.deepcopy` of module state: a new state tensor holding the same values (a
    /// seeded fill is fixed first, so that the copy and the original never differ, as the
    /// copies of a layer cloned in PyTorch start equal).
    #[pyfunction]
    fn copy_state(tensor: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| match call.tensor(&tensor)? {
            TensorRef::Const(c) => {
                c.fix_values();
                let init = c.init.borrow().clone();
                call.new_constant(c.shape.clone(), init, c.is_param, c.dtype)
            }
            _ => Ok(tensor.clone()),
        })
    }

    /// `Tensor.clone()`: another tensor object with the same value, so that an in-place
    /// write into one (`w = x.clone(); w.relu_()`) leaves the other as it was. Inside
    /// `forward` it is the same node under a new proxy (a write rebinds only that proxy);
    /// outside, a constant's values are copied, since an eager write changes them.
    #[pyfunction]
    fn copy(tensor: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| match call.tensor(&tensor)? {
            TensorRef::Const(c) if call.is_eager() => {
                c.fix_values();
                let init = c.init.borrow().clone();
                call.new_constant(c.shape.clone(), init, false, c.dtype)
            }
            other => call.fresh_proxy(other),
        })
    }

    /// `torch.tensor(data)`: a constant of `shape` holding `values` (row-major) as `dtype`.
    #[pyfunction]
    fn from_values(
        shape: Vec<i64>,
        values: Vec<f64>,
        dtype: PyUtf8StrRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        Call::run(vm, |call| {
            let dtype = DType::parse(dtype.as_str()).ok_or_else(|| {
                call.unsupported(
                    format!("torch.tensor of dtype {}", dtype.as_str()),
                    "Tailor's tensors are float32, int64, int32 or bool",
                )
            })?;
            if let Some(value) = values.iter().find(|&&v| !dtype.carries(v)) {
                return Err(call.unsupported(
                    format!("the {dtype} value {value}"),
                    "Tailor keeps int64 values as float32, exact for whole numbers within ±2^24",
                ));
            }
            let data: Vec<f32> = values.iter().map(|&v| v as f32).collect();
            call.new_constant(shape, Init::Data(data.into()), false, dtype)
        })
    }

    /// `t.dtype`'s name: `float32`, `int64` or `bool`.
    #[pyfunction]
    fn dtype_of(tensor: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            let dtype = call.proxy_dtype(&tensor)?;
            Ok(vm.ctx.new_str(dtype.name()).into())
        })
    }

    /// `tensor.requires_grad`: what the model set, else whether it is module state (a
    /// parameter; `register_buffer` sets its buffers' to false).
    #[pyfunction]
    fn requires_grad(tensor: PyObjectRef) -> bool {
        let Some(proxy) = tensor.downcast_ref::<TensorBase>() else {
            return false;
        };
        proxy
            .requires_grad()
            .unwrap_or_else(|| matches!(proxy.tensor(), TensorRef::Const(c) if c.is_param))
    }

    /// Sets `tensor.requires_grad` (`requires_grad_`, `nn.Parameter(…, requires_grad=)`).
    #[pyfunction]
    fn set_requires_grad(tensor: PyObjectRef, value: bool) {
        if let Some(proxy) = tensor.downcast_ref::<TensorBase>() {
            proxy.set_requires_grad(value);
        }
    }

    /// Whether `tensor` is a constant: module state, or a tensor a factory made outside
    /// `forward` (whose fill `nn.init` and `fill_` set in place).
    #[pyfunction]
    fn is_constant(tensor: PyObjectRef) -> bool {
        matches!(
            tensor.downcast_ref::<TensorBase>().map(|t| t.tensor()),
            Some(TensorRef::Const(_))
        )
    }

    #[pyfunction]
    fn is_state(tensor: PyObjectRef) -> bool {
        matches!(
            tensor.downcast_ref::<TensorBase>().map(|t| t.tensor()),
            Some(TensorRef::Const(c)) if c.is_param
        )
    }

    /// Whether a graph is being captured now (`nn.Module.__getattribute__` asks before it
    /// reports a read).
    #[pyfunction]
    fn tracing(vm: &VirtualMachine) -> bool {
        crate::frontend::attributes::tracing(vm)
    }

    /// `module.name` was read and gave `value` (a bool, int or float: guarded when the
    /// capture keeps such reads; a plain tensor attribute: lifted; `attributes.rs`).
    #[pyfunction]
    fn attribute_read(
        module: PyObjectRef,
        name: PyUtf8StrRef,
        value: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let session = Call::session(vm)?;
        crate::frontend::attributes::record(vm, &session, &module, name.as_str(), &value);
        Ok(())
    }

    /// The dict `name`, a global of the module `module`, was read by a traced library
    /// (einops' backend registry): its length is guarded (`attributes.rs`).
    #[pyfunction]
    fn global_dict_read(
        module: PyUtf8StrRef,
        name: PyUtf8StrRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let session = Call::session(vm)?;
        crate::frontend::attributes::record_global_dict(
            vm,
            &session,
            module.as_str(),
            name.as_str(),
        );
        Ok(())
    }

    /// Names a constant after its dotted path (`layers.0.weight`), if it has no name yet.
    #[pyfunction]
    fn set_name(tensor: PyObjectRef, name: PyUtf8StrRef) {
        if let Some(TensorRef::Const(c)) = tensor.downcast_ref::<TensorBase>().map(|t| t.tensor()) {
            if c.name.borrow().is_empty() {
                *c.name.borrow_mut() = name.as_str().to_string();
            }
        }
    }

    // ---- sizes -----------------------------------------------------------------------------

    #[pyfunction]
    fn shape(x: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            let shape = call.shape_of(&x)?;
            let sizes = shape
                .into_iter()
                .map(|e| call.wrap_size(e))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(vm.ctx.new_tuple(sizes).into())
        })
    }

    #[pyfunction]
    fn size(x: PyObjectRef, dim: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            let shape = call.shape_of(&x)?;
            let dim = call.int(&dim, "dim")?;
            let dim = rules::normalize_dim(&call.op_ctx("size"), dim, shape.len())?;
            call.wrap_size(shape[dim].clone())
        })
    }

    #[pyfunction]
    fn numel(x: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            let shape = call.shape_of(&x)?;
            call.wrap_size(rules::numel(&shape))
        })
    }

    // ---- tensor operations -----------------------------------------------------------------

    /// `_tailor.op(name, *args, **kwargs)`: the op `name` of the op table, its arguments
    /// bound to the entry's schema.
    #[pyfunction]
    fn op(args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| table::call_op(call, args))
    }

    /// `[(op, [alias, …])]`: the methods and functions the `torch` package defines from the
    /// op table (`Tensor.relu`, `torch.relu`, …).
    #[pyfunction]
    fn op_aliases(vm: &VirtualMachine) -> PyResult {
        let pairs = table::entries()
            .iter()
            .filter(|entry| !entry.aliases.is_empty())
            .map(|entry| {
                let aliases = entry
                    .aliases
                    .iter()
                    .map(|alias| vm.ctx.new_str(*alias).into())
                    .collect();
                vm.ctx
                    .new_tuple(vec![
                        vm.ctx.new_str(entry.name).into(),
                        vm.ctx.new_list(aliases).into(),
                    ])
                    .into()
            })
            .collect();
        Ok(vm.ctx.new_list(pairs).into())
    }

    // ---- values of tensors, which capture never reads --------------------------------------

    #[pyfunction]
    fn tensor_condition(x: PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
        Call::run_with(vm, |call| {
            let values = match call.tensor(&x)? {
                TensorRef::Value(value, _) => Some(crate::graph::Tensor::clone(&value)),
                TensorRef::Const(constant) if call.is_eager() => Some(constant.observed()),
                _ => None,
            };
            let truth = match &values {
                Some(tensor) if tensor.data.len() == 1 => Some(tensor.data[0] != 0.0),
                Some(tensor) => {
                    return Err(call.type_error(format!(
                        "RuntimeError: Boolean value of Tensor with {} values is ambiguous",
                        tensor.data.len()
                    )));
                }
                None => None,
            };
            call.graph_break(BreakReason::Branch, Some(&x), truth, None)?;
            truth.ok_or_else(|| {
                let what = call.decision().map_or("condition", |d| d.what);
                call.unsupported(
                    format!("using a tensor's value in '{what}' outside a run of forward"),
                    "a graph tensor was kept after forward returned",
                )
            })
        })
    }

    // ---- symbolic sizes ------------------------------------------------------------------

    /// `a op b` on sizes: an expression, or NotImplemented when an operand is not a size.
    #[pyfunction]
    fn sym_binary(
        name: PyUtf8StrRef,
        lhs: PyObjectRef,
        rhs: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        Call::run(vm, |call| {
            let (Some(a), Some(b)) = (call.size_expr(&lhs), call.size_expr(&rhs)) else {
                return Ok(vm.ctx.not_implemented());
            };
            let result = match name.as_str() {
                "add" => &a + &b,
                "sub" => &a - &b,
                "mul" => &a * &b,
                op @ ("floordiv" | "mod") => {
                    // A symbolic divisor that divides exactly as polynomials (einops'
                    // `(x y)` of length `s2*s3` split by `y=s3`, or of a convolution's
                    // `(s2//4 + 1)**2` by `s2//4 + 1`): the quotient, remainder 0, as
                    // PyTorch's sympy simplifies `FloorDiv(s2*s3, s3)`.
                    let exact = b
                        .as_int()
                        .is_none()
                        .then(|| a.divide_polynomial(&b))
                        .flatten();
                    if let Some(quotient) = exact {
                        let result = if op == "floordiv" {
                            quotient
                        } else {
                            Expr::int(0)
                        };
                        return call.wrap_size(call.replace(&result));
                    }
                    if b.as_int().is_none_or(|d| d <= 0) {
                        return Err(call.unsupported(
                            "dividing by a symbolic size",
                            "only division by a positive constant keeps a size expression",
                        ));
                    }
                    if op == "floordiv" {
                        a.floor_div(&b)
                    } else {
                        a.modulo(&b)
                    }
                }
                _ => return Err(call.unsupported("operator ** on sizes", "")),
            };
            call.wrap_size(call.replace(&result))
        })
    }

    #[pyfunction]
    fn sym_neg(value: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            let expr = call
                .size_expr(&value)
                .ok_or_else(|| call.type_error("bad operand type for unary -"))?;
            call.wrap_size(-expr)
        })
    }

    /// `a op b` on sizes: a bool when both are known, else a `SymBool`.
    #[pyfunction]
    fn sym_compare(
        name: PyUtf8StrRef,
        lhs: PyObjectRef,
        rhs: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        Call::run(vm, |call| {
            let (Some(a), Some(b)) = (call.size_expr(&lhs), call.size_expr(&rhs)) else {
                return Ok(vm.ctx.not_implemented());
            };
            let op = match name.as_str() {
                "eq" => CmpOp::Eq,
                "ne" => CmpOp::Ne,
                "lt" => CmpOp::Lt,
                "le" => CmpOp::Le,
                "gt" => CmpOp::Gt,
                _ => CmpOp::Ge,
            };
            call.wrap_rel(Rel::new(a, op, b))
        })
    }

    /// The truth value of a `SymInt` (`!= 0`) or `SymBool`, decided on the sizes seen now
    /// and recorded as a guard.
    #[pyfunction]
    fn sym_condition(value: PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
        Call::run_with(vm, |call| {
            let rel = call.rel_of(&value)?;
            call.decide(&rel)
        })
    }

    /// A `SymInt` used where Python needs an int (`range(n)`, `int(n)`): specialised to its
    /// current size, which becomes a guard, as Dynamo's `guard_int` does.
    #[pyfunction]
    fn sym_specialize(value: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            let value = call.specialize(&value)?;
            Ok(vm.ctx.new_int(value).into())
        })
    }

    /// `repr` of a proxy.
    #[pyfunction]
    fn describe(value: PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
        Call::run_with(vm, |call| Ok(call.describe(&value)))
    }

    /// Whether `frame` runs code the user wrote: their file, or anything it had Python
    /// compile (`exec("while True: pass")`, `eval`, `compile(…)`), whose lines count
    /// towards the budget like the file's own. A frame of a frozen module (the `torch`
    /// package, the stdlib) is not: its code is named after its module and runs in that
    /// module's own globals, which code the user compiled cannot both claim.
    fn is_user_frame(frame: &PyObjectRef, vm: &VirtualMachine) -> bool {
        let Some(code) = frame
            .get_attr("f_code", vm)
            .ok()
            .and_then(|code| code.downcast::<PyCode>().ok())
        else {
            return true;
        };
        let path = code.source_path();
        if path.as_str() == FILE_NAME {
            return true;
        }
        // The VM's own import machinery (`<frozen importlib._bootstrap>`, which an import
        // inside a library function runs: einops' lazy `from … import …`) is registered as
        // `_frozen_importlib`.
        let module = match path.as_str() {
            "<frozen importlib._bootstrap>" => "_frozen_importlib",
            "<frozen importlib._bootstrap_external>" => "_frozen_importlib_external",
            path => path,
        };
        let module_globals = vm
            .sys_module
            .get_attr("modules", vm)
            .and_then(|modules| modules.get_item(module, vm))
            .and_then(|module| module.get_attr("__dict__", vm));
        let globals = frame.get_attr("f_globals", vm);
        match (module_globals, globals) {
            (Ok(module), Ok(globals)) => !module.is(&globals),
            _ => true,
        }
    }

    /// Raises `construct is not supported (note)` at the user's line.
    #[pyfunction]
    fn unsupported(construct: PyUtf8StrRef, note: PyUtf8StrRef, vm: &VirtualMachine) -> PyResult {
        Call::run(vm, |call| {
            Err(call.unsupported(construct.as_str(), note.as_str()))
        })
    }
}
