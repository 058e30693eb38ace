//! Front end: PyTorch source text to a captured `Graph` (a tiny TorchDynamo).
//!
//! `parse` turns source into a `Program` (module-level names evaluated: imports, classes,
//! functions, constant tensors). `Program::entry` instantiates the compiled module with its
//! default arguments. `capture` runs `forward` symbolically over tensor proxies whose sizes
//! come from the `ShapeEnv`, appending one graph node per tensor op.
//! Invariant: capture never looks at a concrete size except through the `ShapeEnv`, so
//! every size-dependent path it takes is guarded; anything outside the subset is an error
//! with line:col naming the construct, never a panic.

mod builtins;
mod interp;
mod ops;
#[cfg(feature = "python")]
pub mod python;
pub mod value;

use crate::graph::{Graph, Op, Shape, Span};
use crate::shape::{ShapeEnv, ShapeError};
use interp::Interp;
use rustpython_parser::ast;
use rustpython_parser::text_size::TextSize;
use std::rc::Rc;
use value::{ModuleRef, Value};

/// Errors of the front end: the source is not in the supported subset, or capture found a
/// bad program.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FrontendError {
    /// The file is not valid Python.
    #[error("{span}: syntax error: {message}")]
    Syntax {
        /// Where.
        span: Span,
        /// The parser's message.
        message: String,
    },
    /// Valid Python outside the supported subset.
    #[error("{span}: {construct} is not supported{}", note_suffix(.note))]
    Unsupported {
        /// Where.
        span: Span,
        /// The construct (`while loop`, `torch.nonzero`, …).
        construct: String,
        /// What PyTorch would do, or what to write instead.
        note: String,
    },
    /// A name that is not defined.
    #[error("{span}: name '{name}' is not defined")]
    Name {
        /// Where.
        span: Span,
        /// The name.
        name: String,
    },
    /// A wrong type, arity or value (Python's TypeError / ValueError / AttributeError).
    #[error("{span}: {message}")]
    Type {
        /// Where.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// An `assert` in the model failed for these sizes.
    #[error("{span}: AssertionError: the assertion failed for these input sizes")]
    Assertion {
        /// Where.
        span: Span,
    },
    /// The requested entry point does not exist.
    #[error("no nn.Module subclass or function named '{name}' (found: {found})")]
    NoEntry {
        /// The requested name.
        name: String,
        /// What the file defines.
        found: String,
    },
    /// The file defines nothing to compile.
    #[error("the file defines no nn.Module subclass and no function to compile")]
    Empty,
    /// A shape error inside the model.
    #[error(transparent)]
    Shape(#[from] ShapeError),
}

fn note_suffix(note: &str) -> String {
    if note.is_empty() {
        String::new()
    } else {
        format!(" ({note})")
    }
}

impl FrontendError {
    /// Whether the error is in the program itself (unsupported construct, bad name or type)
    /// rather than in this call's sizes (a shape error, a failed assert, a constraint).
    pub fn is_in_program(&self) -> bool {
        !matches!(
            self,
            FrontendError::Shape(_) | FrontendError::Assertion { .. }
        )
    }

    /// The source position, when the error has one.
    pub fn span(&self) -> Option<Span> {
        match self {
            FrontendError::Syntax { span, .. }
            | FrontendError::Unsupported { span, .. }
            | FrontendError::Name { span, .. }
            | FrontendError::Type { span, .. }
            | FrontendError::Assertion { span } => Some(*span),
            FrontendError::Shape(
                ShapeError::Mismatch { span, .. } | ShapeError::Invalid { span, .. },
            ) => Some(*span),
            FrontendError::Shape(ShapeError::ConstraintViolation { origin, .. }) => origin.span,
            _ => None,
        }
    }
}

/// Why a module-level statement that is neither a definition nor an assignment is skipped.
pub(crate) const DRIVER_CODE: &str = "driver code: Tailor compiles the model and runs only definitions and assignments at module level";

/// A statement at module level that capture did not execute (the script's driver code).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Skipped {
    /// Where it starts.
    pub span: Span,
    /// Why it was skipped.
    pub reason: String,
}

/// A parsed and module-level-evaluated source file.
pub struct Program {
    source: String,
    line_starts: Vec<usize>,
    globals: Vec<(String, Value)>,
    skipped: Vec<Skipped>,
    const_ids: std::cell::Cell<usize>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.globals.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Program").field("globals", &names).finish()
    }
}

/// What `compile` wraps: an `nn.Module` instance or a plain function.
#[derive(Clone, Debug)]
pub struct EntryPoint {
    /// Class or function name.
    pub name: String,
    /// Tensor argument names (parameters without defaults, `self` excluded).
    pub inputs: Vec<String>,
    /// The compiled function (`forward` for a module) and the line it is defined on.
    pub function: (String, u32),
    target: EntryTarget,
}

#[derive(Clone, Debug)]
enum EntryTarget {
    Module(ModuleRef),
    Function(Rc<ast::StmtFunctionDef>),
}

/// Byte offsets at which the lines of `source` start.
pub(crate) fn line_starts(source: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(source.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// 1-based line and column (in characters, as editors count) of a byte offset.
pub(crate) fn span_at(source: &str, line_starts: &[usize], offset: usize) -> Span {
    let offset = offset.min(source.len());
    let line = line_starts.partition_point(|&start| start <= offset);
    let start = line_starts[line - 1];
    let col = source[start..offset].chars().count() + 1;
    Span {
        line: line as u32,
        col: col as u32,
    }
}

/// The statements of a module, or its syntax error with line:col.
pub(crate) fn parse_module(
    source: &str,
    line_starts: &[usize],
) -> Result<Vec<ast::Stmt>, FrontendError> {
    let suite = rustpython_parser::parse(source, rustpython_parser::Mode::Module, "<model>")
        .map_err(|err| FrontendError::Syntax {
            span: span_at(source, line_starts, usize::from(err.offset)),
            message: err.error.to_string(),
        })?;
    let ast::Mod::Module(module) = suite else {
        unreachable!("Mode::Module always yields a module")
    };
    Ok(module.body)
}

/// Parses `source` and evaluates its module level.
pub fn parse(source: &str) -> Result<Program, FrontendError> {
    let line_starts = line_starts(source);
    let mut program = Program {
        source: source.to_string(),
        line_starts,
        globals: Vec::new(),
        skipped: Vec::new(),
        const_ids: std::cell::Cell::new(0),
    };
    let body = parse_module(source, &program.line_starts)?;
    let mut interp = Interp::new(&program, None);
    let (globals, skipped) = interp.run_module(&body)?;
    program.globals = globals;
    program.skipped = skipped;
    Ok(program)
}

impl Program {
    /// 1-based line and column of a byte offset.
    pub(crate) fn span_at(&self, offset: TextSize) -> Span {
        span_at(&self.source, &self.line_starts, usize::from(offset))
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text(&self, line: u32) -> &str {
        self.source
            .lines()
            .nth(line.saturating_sub(1) as usize)
            .unwrap_or("")
    }

    /// A fresh id for a constant tensor.
    pub(crate) fn next_const_id(&self) -> usize {
        let id = self.const_ids.get();
        self.const_ids.set(id + 1);
        id
    }

    /// The module-level statements that were not executed.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    pub(crate) fn global(&self, name: &str) -> Option<&Value> {
        self.globals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// Finds and instantiates the entry: `name`, or the last `nn.Module` subclass, or the
    /// last function. Modules are constructed with their default arguments.
    pub fn entry(&self, name: Option<&str>) -> Result<EntryPoint, FrontendError> {
        let candidates: Vec<(&String, &Value)> = self
            .globals
            .iter()
            .filter(|(_, v)| {
                matches!(v, Value::Class(c) if interp::is_module_class(self, c))
                    || matches!(v, Value::Function(_))
            })
            .map(|(n, v)| (n, v))
            .collect();
        let chosen = match name {
            Some(name) => candidates
                .iter()
                .rev()
                .find(|(n, _)| n.as_str() == name)
                .copied(),
            None => candidates
                .iter()
                .rev()
                .find(|(_, v)| matches!(v, Value::Class(_)))
                .or_else(|| candidates.last())
                .copied(),
        };
        let Some((entry_name, value)) = chosen else {
            return Err(match name {
                Some(name) => FrontendError::NoEntry {
                    name: name.to_string(),
                    found: candidates
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                },
                None => FrontendError::Empty,
            });
        };
        let mut interp = Interp::new(self, None);
        match value {
            Value::Class(class) => {
                let module = interp.instantiate(class)?;
                interp::name_parameters(&module, "");
                let forward = interp::find_method(self, class, "forward").ok_or_else(|| {
                    FrontendError::Type {
                        span: self.span_at(class.range.start()),
                        message: format!("class '{}' has no forward method", class.name),
                    }
                })?;
                let inputs = interp::input_names(&forward, true);
                let line = self.span_at(forward.range.start()).line;
                Ok(EntryPoint {
                    name: entry_name.clone(),
                    inputs,
                    function: ("forward".into(), line),
                    target: EntryTarget::Module(module),
                })
            }
            Value::Function(function) => Ok(EntryPoint {
                name: entry_name.clone(),
                inputs: interp::input_names(function, false),
                function: (
                    function.name.to_string(),
                    self.span_at(function.range.start()).line,
                ),
                target: EntryTarget::Function(function.clone()),
            }),
            _ => unreachable!("candidates are classes and functions"),
        }
    }
}

/// Runs the entry's `forward` over inputs of the given symbolic shapes, building the graph.
///
/// Errors PyTorch raises at the end of tracing (constraint violations of `mark_dynamic`)
/// are raised here too; on success every shape in the graph has the final replacements
/// applied.
pub fn capture(
    program: &Program,
    entry: &EntryPoint,
    input_shapes: &[Shape],
    env: &mut ShapeEnv,
) -> Result<Graph, FrontendError> {
    let mut graph = Graph::default();
    let mut args = Vec::new();
    for (name, shape) in entry.inputs.iter().zip(input_shapes) {
        args.push(Value::Tensor(graph.push(
            name,
            Op::Input { name: name.clone() },
            vec![],
            shape.clone(),
            None,
        )));
    }
    let mut interp = Interp::new(program, Some((&mut graph, env)));
    let result = match &entry.target {
        EntryTarget::Module(module) => {
            interp.call_module(module, args, Span { line: 1, col: 1 })?
        }
        EntryTarget::Function(function) => {
            interp.call_function(function, None, args, vec![], Span { line: 1, col: 1 })?
        }
    };
    let outputs = interp.output_tensors(&result)?;
    drop(interp);
    graph.push("output", Op::Output, outputs, vec![], None);
    if let Some(violation) = env.take_violations().into_iter().next() {
        return Err(violation.into());
    }
    graph.map_exprs(|e| env.replace(e));
    Ok(graph)
}
