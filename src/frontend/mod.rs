//! Front end: a PyTorch model file to a captured `Graph`, on a real Python VM (RustPython).
//!
//! `parse` runs the file's module level in a fresh interpreter whose `torch` is the
//! Python package of `py/` (frozen into the binary: nothing is read from disk), skipping
//! driver code. `Program::entry` constructs the entry (the last `nn.Module` subclass by
//! default, with its default arguments, in eval mode) and names its parameters after
//! PyTorch's dotted paths. `capture` calls `forward` on tensor proxies of the native module
//! `_tailor` (`native.rs`), whose operations append graph nodes through `ops` and whose
//! sizes decide branches through `ShapeEnv::evaluate`, recording the guard where PyTorch's
//! `ShapeEnv.evaluate_expr` would; the module attributes it reads are guarded too
//! (`attributes.rs`).
//! Invariant: capture never looks at a concrete size except through the `ShapeEnv`, so every
//! size-dependent path it takes is guarded; a Python exception in the user's code is a
//! `FrontendError` with its line:col, never a panic.

mod attributes;
mod bounds;
mod breaks;
mod call;
mod capture;
mod errors;
mod math;
mod native;
mod ops;
mod script;
mod source;
mod state;
mod surface;
mod table;

use crate::graph::{Span, TracedArg};
use crate::shape::ShapeEnv;
pub use attributes::read as read_attributes;
pub use breaks::{BreakPoint, BreakReason, GraphBreak, PROBE_MAX_ELEMENTS, Probed};
use call::Call;
pub use capture::{ResumeTracer, Segment};
pub use errors::FrontendError;
use errors::frontend_error;
use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::compiler::Mode;
use rustpython_vm::frozen::FrozenLib;
use rustpython_vm::scope::Scope;
use rustpython_vm::{AsObject, Interpreter, PyObjectRef, PyResult, Settings, VirtualMachine};
pub use script::{
    CallArg, CodeKey, DimMark, HostCall, Output, SCRIPT_TIME_LIMIT_MS, ScriptHost, ScriptOutcome,
    Stream, run_script,
};
use source::{ChunkKind, FILE_NAME, UserSource};
pub use state::StateTensor;
use std::rc::Rc;
pub use surface::{Surface, surface_in};
pub use table::{Lowering, OpEntry, OpRow, SchemaError, check_schemas, entries as op_entries};

/// Why a module-level statement that is neither a definition nor an assignment is skipped.
pub(crate) const DRIVER_CODE: &str = "driver code: Tailor compiles the model and runs only definitions and assignments at module level";

/// Why an import gave stand-ins: the module is not in the frozen Python.
pub(crate) const ABSENT_MODULE: &str = "Tailor's Python has no module";

/// A statement at module level that capture did not execute (the script's driver code).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Skipped {
    /// Where it starts.
    pub span: Span,
    /// Why it was skipped.
    pub reason: String,
}

/// A model file whose module level ran in its own interpreter. A clone is the same program
/// (the same interpreter and module objects), not a new run of the file.
#[derive(Clone)]
pub struct Program {
    source: Rc<UserSource>,
    globals: PyObjectRef,
    skipped: Vec<Skipped>,
    // Last: the objects above belong to this interpreter and are released before it. A
    // script's compiled functions share its interpreter (`Program::of_script`).
    interpreter: Rc<Interpreter>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("skipped", &self.skipped)
            .finish_non_exhaustive()
    }
}

/// What `capture` calls: an `nn.Module` instance or a plain function of the file.
#[derive(Clone, Debug)]
pub struct EntryPoint {
    /// Class or function name.
    pub name: String,
    /// Tensor argument names (parameters without defaults, `self` excluded).
    pub inputs: Vec<String>,
    /// How many of `inputs`, the last ones, are keyword-only (passed by name, as PyTorch's
    /// caller passes them).
    keyword: usize,
    /// The compiled function (`forward` for a module) and the line it is defined on.
    pub function: (String, u32),
    callable: PyObjectRef,
    /// The module instance whose `forward` this is (`None` for a function).
    module: Option<PyObjectRef>,
}

impl EntryPoint {
    /// What `torch.compile(target)` compiles in a script (a module instance's `forward`,
    /// or a function), and the key of the cache its code shares.
    fn of_target(vm: &VirtualMachine, target: &PyObjectRef) -> PyResult<(EntryPoint, CodeKey)> {
        let helper = vm.import("_tailor_frontend", 0)?;
        let described = vm.call_method(&helper, "compiled_target", (target.clone(),))?;
        let fields: Vec<PyObjectRef> = vm.extract_elements_with(&described, Ok)?;
        let [name, function, callable, is_module, key] = fields.as_slice() else {
            return Err(vm.new_type_error("compiled_target gives five fields"));
        };
        let is_module: bool = is_module.clone().try_into_value(vm)?;
        let key: Vec<usize> = vm.extract_elements_with(key, |k| k.try_into_value(vm))?;
        let inputs: Vec<String> = vm
            .call_method(&helper, "inputs", (function.clone(), is_module))?
            .try_into_value(vm)?;
        let keyword: Vec<String> = vm
            .call_method(&helper, "keyword_inputs", (function.clone(),))?
            .try_into_value(vm)?;
        let line: u32 = vm
            .call_method(&helper, "first_line", (function.clone(),))?
            .try_into_value(vm)?;
        let name: String = name.clone().try_into_value(vm)?;
        let function_name = if is_module {
            "forward".to_string()
        } else {
            name.clone()
        };
        let entry = EntryPoint {
            name,
            inputs,
            keyword: keyword.len(),
            function: (function_name, line),
            callable: callable.clone(),
            module: is_module.then(|| target.clone()),
        };
        Ok((entry, (key[0], key.get(1).copied().unwrap_or(0))))
    }
}

/// The CPython modules `build.rs` compiled from the `rustpython-pylib` crate (its `STDLIB`
/// lists them and says why each is there), in RustPython's frozen-library format.
static STDLIB: &FrozenLib<[u8]> =
    FrozenLib::from_ref(include_bytes!(concat!(env!("OUT_DIR"), "/stdlib.frozen")).as_slice());

/// A fresh interpreter with the native `_tailor` and `_math` (under `py/math.py`), `py/` frozen (the `torch`
/// stand-in) and the CPython modules of `STDLIB`; its integers bounded (`bounds.rs`).
pub fn interpreter() -> Interpreter {
    let mut settings = Settings::default();
    settings.allow_external_library = false;
    settings.import_site = false;
    settings.ignore_environment = true;
    settings.isolated = true;
    let builder = Interpreter::builder(settings);
    let tailor = native::_tailor::module_def(&builder.ctx);
    let math = math::native_math::module_def(&builder.ctx);
    let interpreter = builder
        .add_native_modules(&[tailor, math])
        .add_frozen_modules(rustpython_vm::py_freeze!(dir = "../../py"))
        .add_frozen_modules(STDLIB)
        .build();
    interpreter.enter(bounds::install);
    interpreter
}

/// An error of the stand-in `torch` package itself (a bug of Tailor, not of the model).
fn package_error(vm: &VirtualMachine, exc: &PyBaseExceptionRef) -> FrontendError {
    let message = exc
        .as_object()
        .str(vm)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    FrontendError::Type {
        span: Span { line: 1, col: 1 },
        message: format!(
            "Tailor's torch package failed: {}: {message}",
            exc.as_object().class().name()
        ),
    }
}

/// Runs `body` under one run's step budget (`Session::trace` as `sys.settrace`), counted
/// from zero. Runs nest (a script's compiled call captures inside the script's run): the
/// outer run's count and tracing resume afterwards; after the outermost, tracing is off.
fn budgeted<T>(vm: &VirtualMachine, body: impl FnOnce() -> T) -> Result<T, FrontendError> {
    let package = |exc: PyBaseExceptionRef| package_error(vm, &exc);
    let session = Call::session(vm).map_err(package)?;
    let outer_steps = session
        .tracer
        .borrow()
        .is_some()
        .then(|| session.steps.get());
    session.steps.set(0);
    let settrace = |function: PyObjectRef| {
        vm.sys_module
            .get_attr("settrace", vm)?
            .call((function,), vm)
    };
    let trace = session.as_object().get_attr("trace", vm).map_err(package)?;
    *session.tracer.borrow_mut() = Some(trace.clone());
    settrace(trace.clone()).map_err(package)?;
    let result = body();
    match outer_steps {
        Some(steps) => {
            session.steps.set(steps);
            settrace(trace).map_err(package)?;
        }
        None => {
            settrace(vm.ctx.none()).map_err(package)?;
            *session.tracer.borrow_mut() = None;
        }
    }
    Ok(result)
}

/// The modules every model file's run imports, or may: what [`Vm::warm`] imports
/// ahead of need.
const WARM_MODULES: [&str; 8] = [
    "torch",
    "_tailor_frontend",
    "dataclasses",
    "typing",
    "functools",
    "collections",
    "math",
    "operator",
];

/// The Python VM one program runs in, made before the program: fresh, or warmed ahead of
/// need (the VM itself stays the front end's business).
pub struct Vm(Interpreter);

impl Vm {
    /// A fresh interpreter.
    pub fn fresh() -> Vm {
        Vm(interpreter())
    }

    /// A fresh interpreter whose `torch` package and common stdlib modules are imported
    /// already: a page makes one in idle time, so that the next model's run starts from
    /// them (imports are the most of a first capture's time). It behaves as a fresh one:
    /// the user's file still runs in a new `__main__` scope, and nothing of it is imported.
    pub fn warm() -> Result<Vm, FrontendError> {
        let interpreter = interpreter();
        interpreter.enter(|vm| {
            WARM_MODULES.iter().try_for_each(|module| {
                vm.import(*module, 0)
                    .map(drop)
                    .map_err(|exc| package_error(vm, &exc))
            })
        })?;
        Ok(Vm(interpreter))
    }
}

/// Runs `source`'s module level: definitions and imports (an error stops here),
/// assignments (an error skips the assignment) and nothing else (driver code is reported
/// as skipped).
pub fn parse(source: &str) -> Result<Program, FrontendError> {
    parse_in(Vm::fresh(), source)
}

/// [`parse`] in `vm` (fresh, or warmed; never one that ran a program already).
pub fn parse_in(vm: Vm, source: &str) -> Result<Program, FrontendError> {
    let source = Rc::new(UserSource::parse(source)?);
    let interpreter = Rc::new(vm.0);
    let (globals, skipped) = interpreter.enter(|vm| budgeted(vm, || run_module(vm, &source)))??;
    Ok(Program {
        source,
        globals,
        skipped,
        interpreter,
    })
}

/// Readies the interpreter for the user's `source`: the session knows it, `torch` is
/// imported, absent modules get stand-ins and what the file prints is kept in the session
/// (nanoGPT prints its parameter count). Returns the `_tailor_frontend` helper module.
fn prepare(
    vm: &VirtualMachine,
    session: &native::Session,
    source: &Rc<UserSource>,
) -> Result<PyObjectRef, FrontendError> {
    let package = |exc: PyBaseExceptionRef| package_error(vm, &exc);
    *session.source.borrow_mut() = Some(source.clone());
    vm.import("torch", 0).map_err(package)?;
    let helper = vm.import("_tailor_frontend", 0).map_err(package)?;
    vm.call_method(&helper, "install_absent_modules", ())
        .map_err(package)?;
    vm.call_method(&helper, "capture_output", ())
        .map_err(package)?;
    Ok(helper)
}

fn run_module(
    vm: &VirtualMachine,
    source: &Rc<UserSource>,
) -> Result<(PyObjectRef, Vec<Skipped>), FrontendError> {
    let package = |exc: PyBaseExceptionRef| package_error(vm, &exc);
    let session = Call::session(vm).map_err(package)?;
    let helper = prepare(vm, &session, source)?;
    let scope = vm.new_scope_with_main().map_err(package)?;
    let mut skipped = Vec::new();
    for chunk in source.chunks() {
        let outcome = match chunk.kind {
            ChunkKind::Docstring => continue,
            ChunkKind::Driver => {
                skipped.push(Skipped {
                    span: chunk.span,
                    reason: DRIVER_CODE.to_string(),
                });
                continue;
            }
            ChunkKind::Definition | ChunkKind::Assignment => run_chunk(vm, &scope, &chunk.code),
        };
        let absent: Vec<String> = vm
            .call_method(&helper, "take_absent_modules", ())
            .and_then(|names| names.try_into_value(vm))
            .map_err(package)?;
        skipped.extend(absent.into_iter().map(|module| Skipped {
            span: chunk.span,
            reason: format!(
                "{ABSENT_MODULE} '{module}': its names are stand-ins, and calling one is an error"
            ),
        }));
        let Err(exc) = outcome else {
            continue;
        };
        let err = frontend_error(vm, &session, exc);
        if chunk.kind == ChunkKind::Definition {
            return Err(err);
        }
        skipped.push(Skipped {
            span: chunk.span,
            reason: format!("not evaluated: {err}"),
        });
    }
    Ok((scope.globals.into(), skipped))
}

fn run_chunk(vm: &VirtualMachine, scope: &Scope, code: &str) -> PyResult<()> {
    let code = vm
        .compile(code, Mode::Exec, FILE_NAME)
        .map_err(|err| err.into_pyexception(vm, Some(code)))?;
    vm.run_code_obj(code, scope.clone()).map(drop)
}

impl Program {
    /// The program of a script's compiled functions: the script's own interpreter, which
    /// is running (a capture enters it again).
    fn of_script(
        vm: &VirtualMachine,
        session: &native::Session,
        interpreter: Rc<Interpreter>,
    ) -> Option<Program> {
        Some(Program {
            source: session.source.borrow().clone()?,
            globals: vm.ctx.none(),
            skipped: Vec::new(),
            interpreter,
        })
    }

    /// The module-level statements that were not executed.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text(&self, line: u32) -> &str {
        self.source.line_text(line)
    }

    /// Finds and constructs the entry: `name`, or the last `nn.Module` subclass, or the
    /// last function. Modules are constructed with their default arguments, in eval mode.
    pub fn entry(&self, name: Option<&str>) -> Result<EntryPoint, FrontendError> {
        self.interpreter.enter(|vm| {
            let session = Call::session(vm).map_err(|exc| package_error(vm, &exc))?;
            let helper = vm
                .import("_tailor_frontend", 0)
                .map_err(|exc| package_error(vm, &exc))?;
            let package = |exc: PyBaseExceptionRef| package_error(vm, &exc);
            let candidates = vm
                .call_method(&helper, "candidates", (self.globals.clone(),))
                .map_err(package)?;
            let candidates: Vec<(String, PyObjectRef, bool)> = vm
                .extract_elements_with(&candidates, |item| {
                    let fields: Vec<PyObjectRef> = vm.extract_elements_with(&item, Ok)?;
                    let [name, value, is_module] = fields.as_slice() else {
                        return Err(vm.new_type_error("a candidate is (name, value, is_module)"));
                    };
                    Ok((
                        name.clone().try_into_value::<String>(vm)?,
                        value.clone(),
                        is_module.clone().try_into_value::<bool>(vm)?,
                    ))
                })
                .map_err(package)?;
            let chosen = match name {
                Some(name) => candidates.iter().rev().find(|(n, _, _)| n == name),
                None => candidates
                    .iter()
                    .rev()
                    .find(|(_, _, is_module)| *is_module)
                    .or_else(|| candidates.last()),
            };
            let Some((entry_name, value, is_module)) = chosen else {
                return Err(match name {
                    Some(name) => FrontendError::NoEntry {
                        name: name.to_string(),
                        found: candidates
                            .iter()
                            .map(|(n, _, _)| n.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    },
                    None => FrontendError::Empty,
                });
            };
            let python = |exc| frontend_error(vm, &session, exc);
            let (callable, function, module) = if *is_module {
                let module = budgeted(vm, || value.call((), vm))?.map_err(python)?;
                // Compiled for inference, as `Model().eval()`: the mode PyTorch's recorded
                // behaviour here was measured in (a script chooses its own mode).
                vm.call_method(&module, "eval", ()).map_err(python)?;
                vm.call_method(&helper, "name_state", (module.clone(),))
                    .map_err(package)?;
                let forward = vm
                    .call_method(&helper, "forward_of", (value.clone(),))
                    .map_err(package)?;
                if vm.is_none(&forward) {
                    return Err(FrontendError::Type {
                        span: self.source.definition_span(entry_name),
                        message: format!("class '{entry_name}' has no forward method"),
                    });
                }
                let callable = module.get_attr("forward", vm).map_err(python)?;
                (callable, forward, Some(module))
            } else {
                (value.clone(), value.clone(), None)
            };
            let inputs: Vec<String> = vm
                .call_method(&helper, "inputs", (function.clone(), *is_module))
                .and_then(|names| names.try_into_value(vm))
                .map_err(package)?;
            let keyword: Vec<String> = vm
                .call_method(&helper, "keyword_inputs", (function.clone(),))
                .and_then(|names| names.try_into_value(vm))
                .map_err(package)?;
            let line: u32 = vm
                .call_method(&helper, "first_line", (function.clone(),))
                .and_then(|line| line.try_into_value(vm))
                .map_err(package)?;
            let function_name = if *is_module {
                "forward".to_string()
            } else {
                entry_name.clone()
            };
            Ok(EntryPoint {
                name: entry_name.clone(),
                inputs,
                keyword: keyword.len(),
                function: (function_name, line),
                callable,
                module,
            })
        })
    }
}

/// Runs the entry's `forward` over inputs of the given symbolic shapes, building its first
/// graph: to the return, or to the first graph break.
///
/// Errors PyTorch raises at the end of tracing (constraint violations of `mark_dynamic`)
/// are raised here too; on success every shape in the graph has the final replacements
/// applied.
pub fn capture(
    program: &Program,
    entry: &EntryPoint,
    args: &[(String, TracedArg)],
    env: &mut ShapeEnv,
) -> Result<Segment, FrontendError> {
    run_forward(program, entry, capture::Plan::First(args), env).map(segment)
}

/// Builds the graph after break `index - 1` of a call (the resume function's): forward runs
/// eagerly on the call's `values` to that break, then traces with the resume arguments
/// `tracer` gives, to the next break or the return.
pub fn capture_resume(
    program: &Program,
    entry: &EntryPoint,
    values: &[CallArg],
    index: usize,
    tracer: ResumeTracer,
    env: &mut ShapeEnv,
) -> Result<Segment, FrontendError> {
    let plan = capture::Plan::Resume {
        values,
        index,
        tracer,
    };
    run_forward(program, entry, plan, env).map(segment)
}

/// Runs the whole of forward eagerly on a call's `values`, as Python runs it between the
/// graphs of a function that breaks: returns what it held at each break, and what it
/// printed, each piece with the number of breaks passed before it.
pub fn probe(
    program: &Program,
    entry: &EntryPoint,
    values: &[CallArg],
) -> Result<Probed, FrontendError> {
    let mut env = ShapeEnv::new();
    match run_forward(program, entry, capture::Plan::Probe(values), &mut env)? {
        capture::Ran::Probe(points, printed) => Ok(Probed { points, printed }),
        capture::Ran::Segment(_) => unreachable!("a probe captures nothing"),
    }
}

fn segment(ran: capture::Ran) -> Segment {
    match ran {
        capture::Ran::Segment(segment) => *segment,
        capture::Ran::Probe(..) => unreachable!("only a probe plan probes"),
    }
}

fn run_forward(
    program: &Program,
    entry: &EntryPoint,
    plan: capture::Plan<'_>,
    env: &mut ShapeEnv,
) -> Result<capture::Ran, FrontendError> {
    program.interpreter.enter(|vm| {
        let session = Call::session(vm).map_err(|exc| package_error(vm, &exc))?;
        budgeted(vm, || capture::run(vm, &session, entry, plan, env))?
    })
}
