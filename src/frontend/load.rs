//! A model file, loaded and captured: its module level run as the learner's file would run
//! (`parse`), the entry constructed (`Program::entry`), and `forward` captured into a graph
//! from traced arguments, after a given graph break, or probed eagerly (`capture`,
//! `capture_resume`, `probe`).
//!
//! In: the file's text and a `Vm`; then an entry, traced arguments and the cache's
//! `ShapeEnv`. Out: a `Program`, an `EntryPoint`, a `Segment` or `Probed`. Invariant: the
//! module level runs once per program; driver code is skipped and reported, never run.

use super::breaks::Probed;
use super::budget::budgeted;
use super::call::Call;
use super::capture::{self, ResumeTracer, Segment};
use super::errors::FrontendError;
use super::forward;
use super::host::CallArg;
use super::objects::Session;
use super::program::{ABSENT_MODULE, DRIVER_CODE, EntryPoint, Program, Skipped, Vm, package_error};
use super::raised::frontend_error;
use super::source::{Chunk, ChunkKind, FILE_NAME, UserSource};
use crate::graph::{Span, TracedArg};
use crate::shape::ShapeEnv;
use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::builtins::PyCode;
use rustpython_vm::compiler;
use rustpython_vm::compiler::Mode;
use rustpython_vm::compiler::core::bytecode::{CodeObject, ConstantData};
use rustpython_vm::{Interpreter, PyObjectRef, PyRef, VirtualMachine};
use std::rc::Rc;

/// Runs `source`'s module level in `vm` (fresh, or warmed; never one that ran a program
/// already): definitions and imports (an error stops here), assignments (an error skips
/// the assignment) and nothing else (driver code is reported as skipped).
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
/// imported, absent modules get stand-ins, what the file prints is kept in the session
/// (nanoGPT prints its parameter count) and `len` of a tensor stays symbolic. Returns the `_tailor_frontend` helper module.
pub(super) fn prepare(
    vm: &VirtualMachine,
    session: &Session,
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
    vm.call_method(&helper, "install_len", ())
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
            ChunkKind::Definition | ChunkKind::Assignment => {
                compile_chunk(vm, chunk).and_then(|code| {
                    vm.run_code_obj(code, scope.clone())
                        .map(drop)
                        .map_err(|exc| frontend_error(vm, &session, exc))
                })
            }
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
        let Err(err) = outcome else {
            continue;
        };
        if chunk.kind == ChunkKind::Definition {
            return Err(err);
        }
        skipped.push(skip_assignment(&session, chunk, &err));
    }
    Ok((scope.globals.into(), skipped))
}

/// The code of `chunk`, its lines those of the file. The compiler's own refusal
/// (`RecursionError` for a statement nested too deeply) has no frame of the file: it is a
/// syntax error at its line, or the statement's.
fn compile_chunk(vm: &VirtualMachine, chunk: &Chunk) -> Result<PyRef<PyCode>, FrontendError> {
    let mut code = compiler::compile(&chunk.code, Mode::Exec, FILE_NAME, vm.compile_opts())
        .map_err(|err| FrontendError::Syntax {
            span: err.location().map_or(chunk.span, |at| Span {
                line: (at.line.get() + chunk.line_offset) as u32,
                col: at.character_offset.get() as u32,
            }),
            message: err.to_string(),
        })?;
    move_lines(&mut code, chunk.line_offset);
    Ok(PyCode::new_ref_from_bytecode(vm, code))
}

/// Moves every line of `code` and of the code objects inside it down by `by`: its
/// instructions' locations, and its first line (which its line table is relative to).
fn move_lines(code: &mut CodeObject, by: usize) {
    if by == 0 {
        return;
    }
    for (start, end) in code.locations.iter_mut() {
        start.line = start.line.saturating_add(by);
        end.line = end.line.saturating_add(by);
    }
    code.first_line_number = code.first_line_number.map(|line| line.saturating_add(by));
    for constant in code.constants.iter_mut() {
        if let ConstantData::Code { code } = constant {
            move_lines(code, by);
        }
    }
}

/// An assignment at module level that failed: reported as skipped, and each name it would
/// have bound kept in the session, so that a later `NameError` for it says why.
fn skip_assignment(session: &Session, chunk: &Chunk, err: &FrontendError) -> Skipped {
    let text = err.to_string();
    let why = err
        .span()
        .and_then(|span| text.strip_prefix(&format!("{span}: ")))
        .unwrap_or(&text)
        .to_string();
    session.skipped_names.borrow_mut().extend(
        chunk
            .binds
            .iter()
            .map(|name| (name.clone(), chunk.span, why.clone())),
    );
    Skipped {
        span: chunk.span,
        reason: format!("not evaluated: {err}"),
    }
}

/// What kind of thing a file defines that can be an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Candidate {
    /// An `nn.Module` subclass, constructed with its default arguments.
    Class,
    /// An `nn.Module` the file builds at module level (`model = Transformer(dim=64)`).
    Instance,
    /// A function.
    Function,
}

impl Program {
    /// The program of a script's compiled functions: the script's own interpreter, which
    /// is running (a capture enters it again).
    pub(super) fn of_script(
        vm: &VirtualMachine,
        session: &Session,
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

    /// Finds and constructs the entry: `name`, or the last `nn.Module` subclass or instance
    /// the file builds at module level, or the last function. A class is constructed with
    /// its default arguments; a module, class-made or the file's own, runs in eval mode.
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
            let candidates: Vec<(String, PyObjectRef, Candidate)> = vm
                .extract_elements_with(&candidates, |item| {
                    let fields: Vec<PyObjectRef> = vm.extract_elements_with(&item, Ok)?;
                    let [name, value, kind] = fields.as_slice() else {
                        return Err(vm.new_type_error("a candidate is (name, value, kind)"));
                    };
                    let kind = match kind.clone().try_into_value::<String>(vm)?.as_str() {
                        "class" => Candidate::Class,
                        "instance" => Candidate::Instance,
                        _ => Candidate::Function,
                    };
                    Ok((
                        name.clone().try_into_value::<String>(vm)?,
                        value.clone(),
                        kind,
                    ))
                })
                .map_err(package)?;
            // Unnamed: the last module the file defines or builds (a class, or an instance
            // built at module level), else its last function.
            let chosen = match name {
                Some(name) => candidates.iter().rev().find(|(n, _, _)| n == name),
                None => candidates
                    .iter()
                    .rev()
                    .find(|(_, _, kind)| *kind != Candidate::Function)
                    .or_else(|| candidates.last()),
            };
            let Some((entry_name, value, kind)) = chosen else {
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
            // An error with no line of the file (`__init__` returned a value, and Python's
            // check after it has no frame of the user's) is the class's.
            let constructing = |exc| match frontend_error(vm, &session, exc) {
                FrontendError::Type { span, message } => {
                    let span = if span == (Span { line: 1, col: 1 }) {
                        self.source.definition_span(entry_name)
                    } else {
                        span
                    };
                    // The class needs arguments: say how the file can give them.
                    let message = if message.contains("__init__() missing") {
                        format!(
                            "{message}; Tailor builds '{entry_name}()' with no arguments: give \
                             __init__'s parameters defaults, or build the model after the \
                             class (`model = {entry_name}(...)`), and Tailor compiles that \
                             instance"
                        )
                    } else {
                        message
                    };
                    FrontendError::Type { span, message }
                }
                err => err,
            };
            let is_module = *kind != Candidate::Function;
            let (callable, function, module) = if is_module {
                let module = match kind {
                    Candidate::Instance => value.clone(),
                    _ => budgeted(vm, || value.call((), vm))?.map_err(constructing)?,
                };
                // Compiled for inference, as `Model().eval()`: the mode PyTorch's recorded
                // behaviour here was measured in (a script chooses its own mode).
                vm.call_method(&module, "eval", ()).map_err(python)?;
                vm.call_method(&helper, "name_state", (module.clone(),))
                    .map_err(package)?;
                let forward = vm
                    .call_method(&helper, "forward_of", (module.class().to_owned(),))
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
                .call_method(&helper, "inputs", (function.clone(), is_module))
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
            let function_name = if is_module {
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
        budgeted(vm, || forward::run(vm, &session, entry, plan, env))?
    })
}
