//! The interpreter behind `parse`, `Program::entry` and `capture`: Python statements and
//! expressions over `Value`s.
//!
//! Outside `forward` (module level, `__init__`) it only builds modules and constants.
//! Inside, with a graph and a `ShapeEnv`, tensor operations append nodes and size
//! comparisons become symbolic booleans that are guarded when used as conditions.
//! Invariant: every error carries the line:col of the construct it rejects.

use super::ops::{Ops, TensorRef, Tracing};
use super::value::{ConstTensor, ModuleKind, ModuleObj, ModuleRef, Value};
use super::{FrontendError, Program, Skipped};
use crate::graph::{BinaryOp, Graph, Init, NodeId, Scalar, Shape, Span, UnaryOp};
use crate::shape::{Origin, ShapeEnv};
use crate::symbolic::{CmpOp, Expr, Rel};
use rustpython_parser::ast::{self, Ranged};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Deepest call nesting accepted (Python's own limit is 1000; models nest a few levels).
const MAX_DEPTH: usize = 64;
/// Most statements executed in one run: a `for` over a huge range is an error, not a hang.
const MAX_STEPS: usize = 200_000;

/// Module-level names and the statements that were skipped.
type ModuleScope = (Vec<(String, Value)>, Vec<Skipped>);

/// How a block finished.
pub(crate) enum Flow {
    Normal,
    Return(Value),
    Break,
    Continue,
}

struct Frame {
    locals: Vec<(String, Value)>,
    class: Option<Rc<ast::StmtClassDef>>,
    self_value: Option<Value>,
}

/// Positional and keyword arguments of a call.
pub(crate) struct Args {
    pub positional: Vec<Value>,
    pub keywords: Vec<(String, Value)>,
}

impl Args {
    /// The argument at `index` or keyword `name`.
    pub fn get(&self, index: usize, name: &str) -> Option<&Value> {
        self.positional.get(index).or_else(|| {
            self.keywords
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v)
        })
    }
}

pub(crate) struct Interp<'p, 'c> {
    pub program: &'p Program,
    capture: Option<(&'c mut Graph, &'c mut ShapeEnv)>,
    const_nodes: BTreeMap<usize, NodeId>,
    module_globals: Vec<(String, Value)>,
    frames: Vec<Frame>,
    steps: usize,
}

impl<'p, 'c> Interp<'p, 'c> {
    pub fn new(program: &'p Program, capture: Option<(&'c mut Graph, &'c mut ShapeEnv)>) -> Self {
        Interp {
            program,
            capture,
            const_nodes: BTreeMap::new(),
            module_globals: Vec::new(),
            frames: Vec::new(),
            steps: 0,
        }
    }

    pub fn span(&self, node: &impl Ranged) -> Span {
        self.program.span_at(node.start())
    }

    pub fn type_error(&self, span: Span, message: impl Into<String>) -> FrontendError {
        FrontendError::Type {
            span,
            message: message.into(),
        }
    }

    pub fn unsupported(
        &self,
        span: Span,
        construct: impl Into<String>,
        note: impl Into<String>,
    ) -> FrontendError {
        FrontendError::Unsupported {
            span,
            construct: construct.into(),
            note: note.into(),
        }
    }

    // ---- module level -------------------------------------------------------------------

    /// Runs the module body: definitions, imports and constant assignments. Other
    /// statements (the script's driver code) are skipped and reported.
    pub fn run_module(&mut self, body: &[ast::Stmt]) -> Result<ModuleScope, FrontendError> {
        let mut skipped = Vec::new();
        for stmt in body {
            let span = self.span(stmt);
            let is_definition = matches!(
                stmt,
                ast::Stmt::FunctionDef(_)
                    | ast::Stmt::ClassDef(_)
                    | ast::Stmt::Import(_)
                    | ast::Stmt::ImportFrom(_)
            );
            let is_assignment = matches!(stmt, ast::Stmt::Assign(_) | ast::Stmt::AnnAssign(_));
            if is_definition {
                self.exec(stmt)?;
            } else if is_assignment {
                if let Err(err) = self.exec(stmt) {
                    skipped.push(Skipped {
                        span,
                        reason: format!("not evaluated: {err}"),
                    });
                }
            } else if !matches!(stmt, ast::Stmt::Expr(e) if matches!(*e.value, ast::Expr::Constant(_)))
            {
                let reason = super::DRIVER_CODE.to_string();
                skipped.push(Skipped { span, reason });
            }
        }
        Ok((std::mem::take(&mut self.module_globals), skipped))
    }

    // ---- names ----------------------------------------------------------------------------

    fn lookup(&self, name: &str, span: Span) -> Result<Value, FrontendError> {
        if let Some(frame) = self.frames.last() {
            if let Some((_, v)) = frame.locals.iter().rev().find(|(n, _)| n == name) {
                return Ok(v.clone());
            }
        }
        if let Some(v) = self.lookup_global(name) {
            return Ok(v);
        }
        match name {
            "len" | "range" | "super" | "int" | "float" | "min" | "max" | "abs" | "tuple"
            | "list" | "print" | "isinstance" | "enumerate" | "zip" | "sum" | "bool" | "round" => {
                Ok(Value::Builtin(name.to_string()))
            }
            _ => Err(FrontendError::Name {
                span,
                name: name.to_string(),
            }),
        }
    }

    fn lookup_global(&self, name: &str) -> Option<Value> {
        self.module_globals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .or_else(|| self.program.global(name).cloned())
    }

    fn bind(&mut self, name: &str, value: Value) {
        if let Value::Const(c) = &value {
            if !c.is_param && c.name.borrow().is_empty() {
                *c.name.borrow_mut() = name.to_string();
            }
        }
        let slot = match self.frames.last_mut() {
            Some(frame) => &mut frame.locals,
            None => &mut self.module_globals,
        };
        slot.retain(|(n, _)| n != name);
        slot.push((name.to_string(), value));
    }

    // ---- statements -----------------------------------------------------------------------

    pub fn exec_block(&mut self, body: &[ast::Stmt]) -> Result<Flow, FrontendError> {
        for stmt in body {
            match self.exec(stmt)? {
                Flow::Normal => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, stmt: &ast::Stmt) -> Result<Flow, FrontendError> {
        let span = self.span(stmt);
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.unsupported(
                span,
                format!("running more than {MAX_STEPS} statements"),
                "is there a loop over a very large range?",
            ));
        }
        match stmt {
            ast::Stmt::FunctionDef(def) => {
                if !def.decorator_list.is_empty() {
                    return Err(self.unsupported(
                        span,
                        "a decorated function",
                        "remove the decorator; Tailor compiles the function itself",
                    ));
                }
                self.bind(def.name.as_str(), Value::Function(Rc::new(def.clone())));
            }
            ast::Stmt::ClassDef(def) => {
                self.bind(def.name.as_str(), Value::Class(Rc::new(def.clone())))
            }
            ast::Stmt::Return(ret) => {
                let value = match &ret.value {
                    Some(v) => self.eval(v)?,
                    None => Value::None,
                };
                return Ok(Flow::Return(value));
            }
            ast::Stmt::Assign(assign) => {
                let value = self.eval(&assign.value)?;
                for target in &assign.targets {
                    self.assign(target, value.clone())?;
                }
            }
            ast::Stmt::AnnAssign(assign) => {
                if let Some(value) = &assign.value {
                    let value = self.eval(value)?;
                    self.assign(&assign.target, value)?;
                }
            }
            ast::Stmt::AugAssign(aug) => {
                let current = self.eval(&aug.target)?;
                let rhs = self.eval(&aug.value)?;
                let value = self.binary(aug.op, current, rhs, span)?;
                self.assign(&aug.target, value)?;
            }
            ast::Stmt::For(for_stmt) => return self.exec_for(for_stmt, span),
            ast::Stmt::If(if_stmt) => {
                let test = self.eval(&if_stmt.test)?;
                let taken = self.truthy(&test, span, "if")?;
                return self.exec_block(if taken {
                    &if_stmt.body
                } else {
                    &if_stmt.orelse
                });
            }
            ast::Stmt::Assert(assert) => {
                let test = self.eval(&assert.test)?;
                if !self.truthy(&test, span, "assert")? {
                    return Err(FrontendError::Assertion { span });
                }
            }
            ast::Stmt::Import(import) => {
                for alias in &import.names {
                    let path = canonical_module(alias.name.as_str());
                    match &alias.asname {
                        Some(asname) => self.bind(asname.as_str(), Value::Builtin(path)),
                        None => {
                            let top = alias
                                .name
                                .as_str()
                                .split('.')
                                .next()
                                .unwrap_or_default()
                                .to_string();
                            self.bind(&top, Value::Builtin(top.clone()));
                        }
                    }
                }
            }
            ast::Stmt::ImportFrom(import) => {
                let module = import
                    .module
                    .as_ref()
                    .map_or(String::new(), |m| m.to_string());
                for alias in &import.names {
                    let path = canonical_module(&format!("{module}.{}", alias.name));
                    let name = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.bind(name.as_str(), Value::Builtin(path));
                }
            }
            ast::Stmt::Expr(expr) => {
                self.eval(&expr.value)?;
            }
            ast::Stmt::Pass(_) => {}
            ast::Stmt::Break(_) => return Ok(Flow::Break),
            ast::Stmt::Continue(_) => return Ok(Flow::Continue),
            other => {
                return Err(self.unsupported(span, statement_name(other), statement_note(other)));
            }
        }
        Ok(Flow::Normal)
    }

    fn exec_for(&mut self, for_stmt: &ast::StmtFor, span: Span) -> Result<Flow, FrontendError> {
        let iterable = self.eval(&for_stmt.iter)?;
        let items = self.iterate(&iterable, span)?;
        for item in items {
            self.assign(&for_stmt.target, item)?;
            match self.exec_block(&for_stmt.body)? {
                Flow::Break => return Ok(Flow::Normal),
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Normal | Flow::Continue => {}
            }
        }
        self.exec_block(&for_stmt.orelse)
    }

    /// The items a `for` loop visits.
    pub fn iterate(&mut self, iterable: &Value, span: Span) -> Result<Vec<Value>, FrontendError> {
        match iterable {
            Value::Range(start, stop, step) => {
                let count = if *step > 0 {
                    (stop - start).max(0) / step
                } else {
                    (start - stop).max(0) / -step
                };
                if count > MAX_STEPS as i64 {
                    return Err(self.unsupported(
                        span,
                        format!("a loop of {count} iterations"),
                        "loops are unrolled while tracing",
                    ));
                }
                Ok((0..count).map(|i| Value::Int(start + i * step)).collect())
            }
            Value::Tuple(_) | Value::List(_) => {
                Ok(iterable.items().expect("tuples and lists have items"))
            }
            Value::Module(module) => {
                let module = module.borrow();
                match module.kind {
                    ModuleKind::Sequential | ModuleKind::ModuleList => Ok(module.children()),
                    _ => Err(self.type_error(
                        span,
                        format!("'{}' object is not iterable", module.class_name),
                    )),
                }
            }
            Value::Size(_) => Err(self.unsupported(
                span,
                "range over a symbolic size",
                "the loop count would depend on the input size; Dynamo specializes such a loop",
            )),
            Value::Tensor(_) | Value::Const(_) => Err(self.unsupported(
                span,
                "iterating over a tensor",
                "Dynamo unrolls it over dim 0, specializing that size; index the tensor instead",
            )),
            other => Err(self.type_error(
                span,
                format!("'{}' object is not iterable", other.type_name()),
            )),
        }
    }

    fn assign(&mut self, target: &ast::Expr, value: Value) -> Result<(), FrontendError> {
        let span = self.span(target);
        match target {
            ast::Expr::Name(name) => {
                self.bind(name.id.as_str(), value);
                Ok(())
            }
            ast::Expr::Tuple(ast::ExprTuple { elts, .. })
            | ast::Expr::List(ast::ExprList { elts, .. }) => {
                let items = match &value {
                    Value::Tensor(_) | Value::Const(_) => {
                        return Err(self.unsupported(
                            span,
                            "unpacking a tensor",
                            "use indexing or torch.chunk is not in the subset",
                        ));
                    }
                    other => self.iterate(other, span)?,
                };
                if items.len() != elts.len() {
                    return Err(self.type_error(
                        span,
                        format!(
                            "cannot unpack {} values into {} names",
                            items.len(),
                            elts.len()
                        ),
                    ));
                }
                for (elt, item) in elts.iter().zip(items) {
                    self.assign(elt, item)?;
                }
                Ok(())
            }
            ast::Expr::Attribute(attr) => {
                let object = self.eval(&attr.value)?;
                match object {
                    Value::Module(module) if self.capture.is_none() => {
                        if let Value::Const(c) = &value {
                            if c.is_param {
                                c.name.borrow_mut().clear();
                            }
                        }
                        module.borrow_mut().set(attr.attr.as_str(), value);
                        Ok(())
                    }
                    Value::Module(_) => Err(self.unsupported(span, "assigning a module attribute inside forward", "Dynamo would guard on the mutated state; keep forward free of side effects")),
                    other => Err(self.type_error(span, format!("cannot set attribute '{}' on a {}", attr.attr, other.type_name()))),
                }
            }
            ast::Expr::Subscript(_) => Err(self.unsupported(
                span,
                "item assignment",
                "in-place writes into tensors or lists are not in the subset",
            )),
            _ => Err(self.unsupported(span, "this assignment target", "")),
        }
    }

    // ---- expressions ----------------------------------------------------------------------

    pub fn eval(&mut self, expr: &ast::Expr) -> Result<Value, FrontendError> {
        let span = self.span(expr);
        match expr {
            ast::Expr::Constant(c) => self.constant(&c.value, span),
            ast::Expr::Name(name) => self.lookup(name.id.as_str(), span),
            ast::Expr::Attribute(attr) => {
                let object = self.eval(&attr.value)?;
                self.get_attr(object, attr.attr.as_str(), span)
            }
            ast::Expr::Call(call) => self.eval_call(call, span),
            ast::Expr::BinOp(bin) => {
                let lhs = self.eval(&bin.left)?;
                let rhs = self.eval(&bin.right)?;
                self.binary(bin.op, lhs, rhs, span)
            }
            ast::Expr::UnaryOp(unary) => {
                let operand = self.eval(&unary.operand)?;
                self.unary(unary.op, operand, span)
            }
            ast::Expr::BoolOp(bool_op) => {
                let mut last = Value::None;
                for value in &bool_op.values {
                    last = self.eval(value)?;
                    let truth = self.truthy(&last, span, "condition")?;
                    let stop = match bool_op.op {
                        ast::BoolOp::And => !truth,
                        ast::BoolOp::Or => truth,
                    };
                    if stop {
                        return Ok(Value::Bool(truth));
                    }
                }
                Ok(match &last {
                    Value::SymBool(_) | Value::Size(_) => {
                        Value::Bool(self.truthy(&last, span, "condition")?)
                    }
                    _ => last,
                })
            }
            ast::Expr::Compare(compare) => self.eval_compare(compare, span),
            ast::Expr::IfExp(if_exp) => {
                let test = self.eval(&if_exp.test)?;
                if self.truthy(&test, span, "conditional expression")? {
                    self.eval(&if_exp.body)
                } else {
                    self.eval(&if_exp.orelse)
                }
            }
            ast::Expr::Tuple(tuple) => {
                let items = self.eval_items(&tuple.elts)?;
                Ok(Value::tuple(items))
            }
            ast::Expr::List(list) => {
                let items = self.eval_items(&list.elts)?;
                Ok(Value::List(Rc::new(RefCell::new(items))))
            }
            ast::Expr::Subscript(sub) => {
                let object = self.eval(&sub.value)?;
                let index = self.eval(&sub.slice)?;
                self.subscript(object, index, span)
            }
            ast::Expr::Slice(slice) => {
                let part =
                    |this: &mut Self, e: &Option<Box<ast::Expr>>| -> Result<Value, FrontendError> {
                        e.as_ref().map_or(Ok(Value::None), |e| this.eval(e))
                    };
                let lower = part(self, &slice.lower)?;
                let upper = part(self, &slice.upper)?;
                let step = part(self, &slice.step)?;
                Ok(Value::Slice(
                    Box::new(lower),
                    Box::new(upper),
                    Box::new(step),
                ))
            }
            ast::Expr::ListComp(comp) => {
                let items = self.comprehension(&comp.elt, &comp.generators, span)?;
                Ok(Value::List(Rc::new(RefCell::new(items))))
            }
            ast::Expr::GeneratorExp(comp) => {
                let items = self.comprehension(&comp.elt, &comp.generators, span)?;
                Ok(Value::tuple(items))
            }
            other => Err(self.unsupported(span, expression_name(other), "")),
        }
    }

    fn eval_items(&mut self, elts: &[ast::Expr]) -> Result<Vec<Value>, FrontendError> {
        let mut items = Vec::with_capacity(elts.len());
        for elt in elts {
            if let ast::Expr::Starred(starred) = elt {
                let inner = self.eval(&starred.value)?;
                items.extend(self.iterate(&inner, self.span(elt))?);
            } else {
                items.push(self.eval(elt)?);
            }
        }
        Ok(items)
    }

    fn comprehension(
        &mut self,
        elt: &ast::Expr,
        generators: &[ast::Comprehension],
        span: Span,
    ) -> Result<Vec<Value>, FrontendError> {
        let [generator] = generators else {
            return Err(self.unsupported(span, "a comprehension with several 'for' clauses", ""));
        };
        let iterable = self.eval(&generator.iter)?;
        let mut out = Vec::new();
        for item in self.iterate(&iterable, span)? {
            self.assign(&generator.target, item)?;
            let mut keep = true;
            for condition in &generator.ifs {
                let test = self.eval(condition)?;
                keep &= self.truthy(&test, span, "comprehension filter")?;
            }
            if keep {
                out.push(self.eval(elt)?);
            }
        }
        Ok(out)
    }

    fn constant(&self, constant: &ast::Constant, span: Span) -> Result<Value, FrontendError> {
        Ok(match constant {
            ast::Constant::None => Value::None,
            ast::Constant::Bool(b) => Value::Bool(*b),
            ast::Constant::Str(s) => Value::Str(s.clone()),
            ast::Constant::Int(i) => Value::Int(i64::try_from(i).map_err(|_| {
                self.type_error(span, format!("integer {i} does not fit in 64 bits"))
            })?),
            ast::Constant::Float(f) => Value::Float(*f),
            ast::Constant::Ellipsis => Value::Ellipsis,
            ast::Constant::Tuple(items) => Value::tuple(
                items
                    .iter()
                    .map(|c| self.constant(c, span))
                    .collect::<Result<_, _>>()?,
            ),
            ast::Constant::Bytes(_) | ast::Constant::Complex { .. } => {
                return Err(self.unsupported(span, "bytes and complex literals", ""));
            }
        })
    }

    fn eval_call(&mut self, call: &ast::ExprCall, span: Span) -> Result<Value, FrontendError> {
        let func = self.eval(&call.func)?;
        let positional = self.eval_items(&call.args)?;
        let mut keywords = Vec::new();
        for keyword in &call.keywords {
            let Some(name) = &keyword.arg else {
                return Err(self.unsupported(span, "**kwargs in a call", ""));
            };
            keywords.push((name.to_string(), self.eval(&keyword.value)?));
        }
        self.call(
            func,
            Args {
                positional,
                keywords,
            },
            span,
        )
    }

    pub fn call(&mut self, func: Value, args: Args, span: Span) -> Result<Value, FrontendError> {
        match func {
            Value::Builtin(path) => super::builtins::call(self, &path, args, span),
            Value::BoundBuiltin(receiver, name) => {
                super::builtins::call_method(self, *receiver, &name, args, span)
            }
            Value::Class(class) => {
                let module = self.instantiate_with(&class, args, span)?;
                Ok(Value::Module(module))
            }
            Value::Function(def) => {
                self.call_function(&def, None, args.positional, args.keywords, span)
            }
            Value::Method(module, def) => self.call_function(
                &def,
                Some(Value::Module(module)),
                args.positional,
                args.keywords,
                span,
            ),
            Value::Module(module) => {
                if !args.keywords.is_empty() {
                    return Err(self.unsupported(span, "keyword arguments to a module call", ""));
                }
                self.call_module(&module, args.positional, span)
            }
            other => Err(self.type_error(
                span,
                format!("'{}' object is not callable", other.type_name()),
            )),
        }
    }

    /// Calls a user function; `self_value` is the receiver of a method.
    pub fn call_function(
        &mut self,
        def: &ast::StmtFunctionDef,
        self_value: Option<Value>,
        positional: Vec<Value>,
        keywords: Vec<(String, Value)>,
        span: Span,
    ) -> Result<Value, FrontendError> {
        if self.frames.len() >= MAX_DEPTH {
            return Err(self.unsupported(
                span,
                format!("calls nested deeper than {MAX_DEPTH}"),
                "is there unbounded recursion?",
            ));
        }
        let def_span = self.span(def);
        if def.args.vararg.is_some() || def.args.kwarg.is_some() {
            return Err(self.unsupported(
                def_span,
                format!("*args/**kwargs in the signature of '{}'", def.name),
                "list the parameters explicitly",
            ));
        }
        let params: Vec<&ast::ArgWithDefault> = def
            .args
            .posonlyargs
            .iter()
            .chain(&def.args.args)
            .chain(&def.args.kwonlyargs)
            .collect();
        let mut supplied: Vec<Value> = self_value.iter().cloned().chain(positional).collect();
        if supplied.len() > params.len() {
            return Err(self.type_error(
                span,
                format!(
                    "{}() takes {} positional arguments but {} were given",
                    def.name,
                    params.len(),
                    supplied.len()
                ),
            ));
        }
        let mut locals = Vec::new();
        let n_positional = supplied.len();
        for (i, param) in params.iter().enumerate() {
            let name = param.def.arg.as_str();
            let keyword = keywords
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone());
            let value = if i < n_positional {
                if keyword.is_some() {
                    return Err(self.type_error(
                        span,
                        format!("{}() got multiple values for argument '{name}'", def.name),
                    ));
                }
                std::mem::replace(&mut supplied[i], Value::None)
            } else if let Some(value) = keyword {
                value
            } else if let Some(default) = &param.default {
                self.eval(default)?
            } else {
                return Err(self.type_error(
                    span,
                    format!("{}() missing required argument '{name}'", def.name),
                ));
            };
            locals.push((name.to_string(), value));
        }
        if let Some((unknown, _)) = keywords
            .iter()
            .find(|(k, _)| !params.iter().any(|p| p.def.arg.as_str() == k))
        {
            return Err(self.type_error(
                span,
                format!(
                    "{}() got an unexpected keyword argument '{unknown}'",
                    def.name
                ),
            ));
        }
        let class = self.frames.last().and_then(|f| f.class.clone());
        let class = match &self_value {
            Some(Value::Module(module)) => match &module.borrow().kind {
                ModuleKind::User(c) => self
                    .defining_class(c, def.name.as_str())
                    .or(Some(c.clone())),
                _ => class,
            },
            _ => None,
        };
        self.frames.push(Frame {
            locals,
            class,
            self_value,
        });
        let flow = self.exec_block(&def.body);
        self.frames.pop();
        match flow? {
            Flow::Return(value) => Ok(value),
            _ => Ok(Value::None),
        }
    }

    /// The class (the given one or a base) whose body defines `method`.
    fn defining_class(
        &self,
        class: &Rc<ast::StmtClassDef>,
        method: &str,
    ) -> Option<Rc<ast::StmtClassDef>> {
        if class
            .body
            .iter()
            .any(|s| matches!(s, ast::Stmt::FunctionDef(f) if f.name.as_str() == method))
        {
            return Some(class.clone());
        }
        self.user_bases(class)
            .iter()
            .find_map(|base| self.defining_class(base, method))
    }

    /// Base classes written in the source.
    fn user_bases(&self, class: &ast::StmtClassDef) -> Vec<Rc<ast::StmtClassDef>> {
        class
            .bases
            .iter()
            .filter_map(|base| match base {
                ast::Expr::Name(name) => match self.lookup_global(name.id.as_str()) {
                    Some(Value::Class(c)) => Some(c),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    /// Calls an `nn.Module`: `forward` for user classes, the layer's op for built-ins.
    pub fn call_module(
        &mut self,
        module: &ModuleRef,
        args: Vec<Value>,
        span: Span,
    ) -> Result<Value, FrontendError> {
        let kind = module.borrow().kind.clone();
        match kind {
            ModuleKind::User(class) => {
                let forward = find_method_with(self, &class, "forward").ok_or_else(|| {
                    self.type_error(
                        span,
                        format!(
                            "module '{}' has no forward method",
                            module.borrow().class_name
                        ),
                    )
                })?;
                self.call_function(
                    &forward,
                    Some(Value::Module(module.clone())),
                    args,
                    vec![],
                    span,
                )
            }
            _ => super::builtins::apply_layer(self, module, args, span),
        }
    }

    pub fn instantiate(
        &mut self,
        class: &Rc<ast::StmtClassDef>,
    ) -> Result<ModuleRef, FrontendError> {
        let span = self.span(class.as_ref());
        self.instantiate_with(
            class,
            Args {
                positional: vec![],
                keywords: vec![],
            },
            span,
        )
    }

    fn instantiate_with(
        &mut self,
        class: &Rc<ast::StmtClassDef>,
        args: Args,
        span: Span,
    ) -> Result<ModuleRef, FrontendError> {
        if !is_module_class_with(self, class) {
            return Err(self.unsupported(
                span,
                format!("instances of class '{}'", class.name),
                "only nn.Module subclasses can be constructed",
            ));
        }
        let module = Rc::new(RefCell::new(ModuleObj {
            class_name: class.name.to_string(),
            kind: ModuleKind::User(class.clone()),
            attrs: Vec::new(),
        }));
        if let Some(init) = find_method_with(self, class, "__init__") {
            self.call_function(
                &init,
                Some(Value::Module(module.clone())),
                args.positional,
                args.keywords,
                span,
            )?;
        }
        Ok(module)
    }

    /// `super().name` inside a method: the first base class that defines it.
    pub fn super_method(
        &self,
        name: &str,
        span: Span,
    ) -> Result<Option<(Value, Rc<ast::StmtFunctionDef>)>, FrontendError> {
        let frame = self
            .frames
            .last()
            .ok_or_else(|| self.type_error(span, "super() outside a method"))?;
        let (Some(class), Some(self_value)) = (&frame.class, &frame.self_value) else {
            return Err(self.type_error(span, "super() outside a method"));
        };
        let method = self
            .user_bases(class)
            .iter()
            .find_map(|base| find_method_with(self, base, name));
        Ok(method.map(|m| (self_value.clone(), m)))
    }

    // ---- attributes and indexing ------------------------------------------------------------

    fn get_attr(&mut self, object: Value, name: &str, span: Span) -> Result<Value, FrontendError> {
        match object {
            Value::Builtin(path) => Ok(Value::Builtin(format!("{path}.{name}"))),
            Value::Module(module) => {
                if let Some(value) = module.borrow().get(name) {
                    return Ok(value.clone());
                }
                let kind = module.borrow().kind.clone();
                if let ModuleKind::User(class) = &kind {
                    if let Some(method) = find_method_with(self, class, name) {
                        return Ok(Value::Method(module.clone(), method));
                    }
                }
                match name {
                    "training" => Ok(Value::Bool(false)),
                    "forward" | "append" | "to" | "eval" | "cuda" | "cpu" | "float"
                    | "parameters" => Ok(Value::BoundBuiltin(
                        Box::new(Value::Module(module.clone())),
                        name.to_string(),
                    )),
                    _ => Err(self.type_error(
                        span,
                        format!(
                            "'{}' object has no attribute '{name}'",
                            module.borrow().class_name
                        ),
                    )),
                }
            }
            Value::Tensor(_) | Value::Const(_) => {
                super::builtins::tensor_attr(self, object, name, span)
            }
            Value::List(_) if name == "append" => {
                Ok(Value::BoundBuiltin(Box::new(object), name.to_string()))
            }
            Value::BoundBuiltin(receiver, kind) if kind == "super" => match self
                .super_method(name, span)?
            {
                Some((self_value, method)) => match self_value {
                    Value::Module(module) => Ok(Value::Method(module, method)),
                    _ => Err(self.type_error(span, "super() outside a module method")),
                },
                None if name == "__init__" => Ok(Value::BoundBuiltin(receiver, "noop".to_string())),
                None => {
                    Err(self.type_error(span, format!("'super' object has no attribute '{name}'")))
                }
            },
            Value::Tuple(_) if name == "numel" => {
                Ok(Value::BoundBuiltin(Box::new(object), name.to_string()))
            }
            other => Err(self.type_error(
                span,
                format!("'{}' object has no attribute '{name}'", other.type_name()),
            )),
        }
    }

    fn subscript(
        &mut self,
        object: Value,
        index: Value,
        span: Span,
    ) -> Result<Value, FrontendError> {
        match &object {
            Value::Tuple(_) | Value::List(_) => {
                let items = object.items().expect("sequences have items");
                match index {
                    Value::Int(i) => {
                        let fixed = if i < 0 { i + items.len() as i64 } else { i };
                        usize::try_from(fixed)
                            .ok()
                            .and_then(|i| items.get(i).cloned())
                            .ok_or_else(|| self.type_error(span, format!("IndexError: index {i} is out of range for a sequence of length {}", items.len())))
                    }
                    Value::Slice(lower, upper, step) => {
                        let len = items.len() as i64;
                        let bound = |v: &Value, default: i64| -> Result<i64, FrontendError> {
                            match v {
                                Value::None => Ok(default),
                                Value::Int(i) => Ok(if *i < 0 {
                                    (i + len).max(0)
                                } else {
                                    (*i).min(len)
                                }),
                                _ => Err(self.type_error(span, "slice indices must be integers")),
                            }
                        };
                        if !matches!(*step, Value::None | Value::Int(1)) {
                            return Err(self.unsupported(span, "a sequence slice with a step", ""));
                        }
                        let (lo, hi) = (bound(&lower, 0)?, bound(&upper, len)?);
                        let picked = if lo < hi {
                            items[lo as usize..hi as usize].to_vec()
                        } else {
                            vec![]
                        };
                        Ok(Value::tuple(picked))
                    }
                    Value::Size(_) => Err(self.unsupported(
                        span,
                        "indexing a sequence with a symbolic size",
                        "Dynamo would specialize the size",
                    )),
                    other => Err(self.type_error(
                        span,
                        format!(
                            "sequence indices must be integers, not {}",
                            other.type_name()
                        ),
                    )),
                }
            }
            Value::Module(module) => {
                let children = module.borrow().children();
                match index {
                    Value::Int(i) => {
                        let fixed = if i < 0 { i + children.len() as i64 } else { i };
                        usize::try_from(fixed)
                            .ok()
                            .and_then(|i| children.get(i).cloned())
                            .ok_or_else(|| {
                                self.type_error(
                                    span,
                                    format!("IndexError: index {i} is out of range"),
                                )
                            })
                    }
                    _ => Err(self.unsupported(span, "this module index", "use an integer")),
                }
            }
            Value::Tensor(_) | Value::Const(_) => {
                super::builtins::index_tensor(self, object, index, span)
            }
            other => Err(self.type_error(
                span,
                format!("'{}' object is not subscriptable", other.type_name()),
            )),
        }
    }

    // ---- operators ----------------------------------------------------------------------------

    pub fn binary(
        &mut self,
        op: ast::Operator,
        lhs: Value,
        rhs: Value,
        span: Span,
    ) -> Result<Value, FrontendError> {
        let is_tensor = |v: &Value| matches!(v, Value::Tensor(_) | Value::Const(_));
        if is_tensor(&lhs) || is_tensor(&rhs) {
            return super::builtins::tensor_binary(self, op, lhs, rhs, span);
        }
        match (&lhs, &rhs) {
            (Value::Tuple(_), Value::Tuple(_)) if op == ast::Operator::Add => {
                let mut items = lhs.items().expect("tuple");
                items.extend(rhs.items().expect("tuple"));
                return Ok(Value::tuple(items));
            }
            (Value::Str(a), Value::Str(b)) if op == ast::Operator::Add => {
                return Ok(Value::Str(format!("{a}{b}")));
            }
            _ => {}
        }
        if let (Some(a), Some(b)) = (lhs.as_expr(), rhs.as_expr()) {
            if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
                return self.int_binary(op, x, y, span);
            }
            let result = match op {
                ast::Operator::Add => &a + &b,
                ast::Operator::Sub => &a - &b,
                ast::Operator::Mult => &a * &b,
                ast::Operator::FloorDiv | ast::Operator::Mod => {
                    let divisor_positive = b.as_int().is_some_and(|d| d > 0);
                    if !divisor_positive {
                        return Err(self.unsupported(
                            span,
                            "dividing by a symbolic size",
                            "only division by a positive constant keeps a size expression",
                        ));
                    }
                    if op == ast::Operator::FloorDiv {
                        a.floor_div(&b)
                    } else {
                        a.modulo(&b)
                    }
                }
                ast::Operator::Div => {
                    return Err(self.unsupported(
                        span,
                        "true division of a symbolic size",
                        "it would produce a SymFloat; use // for sizes",
                    ));
                }
                _ => {
                    return Err(self.unsupported(
                        span,
                        format!("operator {} on sizes", operator_symbol(op)),
                        "",
                    ));
                }
            };
            let result = match &mut self.capture {
                Some((_, env)) => env.replace(&result),
                None => result,
            };
            return Ok(Value::from_expr(result));
        }
        let as_float = |v: &Value| match v {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        };
        match (as_float(&lhs), as_float(&rhs)) {
            (Some(a), Some(b)) => Ok(Value::Float(match op {
                ast::Operator::Add => a + b,
                ast::Operator::Sub => a - b,
                ast::Operator::Mult => a * b,
                ast::Operator::Div => a / b,
                ast::Operator::Pow => a.powf(b),
                ast::Operator::FloorDiv => (a / b).floor(),
                ast::Operator::Mod => a - b * (a / b).floor(),
                _ => {
                    return Err(self.unsupported(
                        span,
                        format!("operator {} on floats", operator_symbol(op)),
                        "",
                    ));
                }
            })),
            _ => Err(self.type_error(
                span,
                format!(
                    "unsupported operand type(s) for {}: '{}' and '{}'",
                    operator_symbol(op),
                    lhs.type_name(),
                    rhs.type_name()
                ),
            )),
        }
    }

    fn int_binary(
        &self,
        op: ast::Operator,
        a: i64,
        b: i64,
        span: Span,
    ) -> Result<Value, FrontendError> {
        let overflow = || {
            self.type_error(
                span,
                format!("integer overflow in {a} {} {b}", operator_symbol(op)),
            )
        };
        let zero = || {
            self.type_error(
                span,
                "ZeroDivisionError: integer division or modulo by zero",
            )
        };
        Ok(match op {
            ast::Operator::Add => Value::Int(a.checked_add(b).ok_or_else(overflow)?),
            ast::Operator::Sub => Value::Int(a.checked_sub(b).ok_or_else(overflow)?),
            ast::Operator::Mult => Value::Int(a.checked_mul(b).ok_or_else(overflow)?),
            ast::Operator::FloorDiv => {
                if b == 0 {
                    return Err(zero());
                }
                Value::Int(
                    a.checked_div_euclid(b)
                        .map(|q| {
                            if b < 0 && a.rem_euclid(b) != 0 {
                                q - 1
                            } else {
                                q
                            }
                        })
                        .ok_or_else(overflow)?,
                )
            }
            ast::Operator::Mod => {
                if b == 0 {
                    return Err(zero());
                }
                let r = a.rem_euclid(b);
                Value::Int(if b < 0 && r != 0 { r + b } else { r })
            }
            ast::Operator::Div => {
                if b == 0 {
                    return Err(zero());
                }
                Value::Float(a as f64 / b as f64)
            }
            ast::Operator::Pow if b >= 0 => Value::Int(
                a.checked_pow(u32::try_from(b).map_err(|_| overflow())?)
                    .ok_or_else(overflow)?,
            ),
            ast::Operator::Pow => Value::Float((a as f64).powf(b as f64)),
            _ => {
                return Err(self.unsupported(
                    span,
                    format!("operator {} on ints", operator_symbol(op)),
                    "",
                ));
            }
        })
    }

    fn unary(
        &mut self,
        op: ast::UnaryOp,
        operand: Value,
        span: Span,
    ) -> Result<Value, FrontendError> {
        match op {
            ast::UnaryOp::Not => Ok(Value::Bool(!self.truthy(&operand, span, "not")?)),
            ast::UnaryOp::UAdd => Ok(operand),
            ast::UnaryOp::USub => match operand {
                Value::Int(i) => {
                    Ok(Value::Int(i.checked_neg().ok_or_else(|| {
                        self.type_error(span, "integer overflow")
                    })?))
                }
                Value::Float(f) => Ok(Value::Float(-f)),
                Value::Size(e) => Ok(Value::from_expr(-e)),
                Value::Tensor(_) | Value::Const(_) => {
                    super::builtins::unary_op(self, UnaryOp::Neg, operand, span)
                }
                other => Err(self.type_error(
                    span,
                    format!("bad operand type for unary -: '{}'", other.type_name()),
                )),
            },
            ast::UnaryOp::Invert => Err(self.unsupported(span, "operator ~", "")),
        }
    }

    fn eval_compare(
        &mut self,
        compare: &ast::ExprCompare,
        span: Span,
    ) -> Result<Value, FrontendError> {
        let mut lhs = self.eval(&compare.left)?;
        let mut results = Vec::new();
        for (op, right) in compare.ops.iter().zip(&compare.comparators) {
            let rhs = self.eval(right)?;
            results.push(self.compare(*op, &lhs, &rhs, span)?);
            lhs = rhs;
        }
        if results.len() == 1 {
            return Ok(results.pop().expect("one result"));
        }
        // A chain `a < b < c` is `a < b and b < c`: decide each link in order.
        for result in &results {
            if !self.truthy(result, span, "comparison")? {
                return Ok(Value::Bool(false));
            }
        }
        Ok(Value::Bool(true))
    }

    fn compare(
        &mut self,
        op: ast::CmpOp,
        lhs: &Value,
        rhs: &Value,
        span: Span,
    ) -> Result<Value, FrontendError> {
        use ast::CmpOp as P;
        match op {
            P::Is | P::IsNot => {
                let same = matches!((lhs, rhs), (Value::None, Value::None))
                    || matches!((lhs, rhs), (Value::Bool(a), Value::Bool(b)) if a == b);
                return Ok(Value::Bool(same == (op == P::Is)));
            }
            P::In | P::NotIn => {
                let items = rhs
                    .items()
                    .ok_or_else(|| self.type_error(span, "'in' needs a tuple or list"))?;
                let mut found = false;
                for item in &items {
                    let equal = self.compare(P::Eq, lhs, item, span)?;
                    found |= self.truthy(&equal, span, "in")?;
                }
                return Ok(Value::Bool(found == (op == P::In)));
            }
            _ => {}
        }
        if matches!(lhs, Value::Tensor(_) | Value::Const(_))
            || matches!(rhs, Value::Tensor(_) | Value::Const(_))
        {
            return Err(self.unsupported(
                span,
                "comparing tensor values",
                "a data-dependent condition makes Dynamo graph-break",
            ));
        }
        let cmp = match op {
            P::Eq => CmpOp::Eq,
            P::NotEq => CmpOp::Ne,
            P::Lt => CmpOp::Lt,
            P::LtE => CmpOp::Le,
            P::Gt => CmpOp::Gt,
            P::GtE => CmpOp::Ge,
            _ => unreachable!("identity and membership are handled above"),
        };
        if let (Some(a), Some(b)) = (lhs.as_expr(), rhs.as_expr()) {
            let rel = Rel::new(a, cmp, b);
            return Ok(match rel.eval(&crate::symbolic::Bindings::new()) {
                Some(known) if rel.lhs.free_syms().is_empty() && rel.rhs.free_syms().is_empty() => {
                    Value::Bool(known)
                }
                _ => Value::SymBool(rel),
            });
        }
        let as_float = |v: &Value| match v {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        };
        if let (Some(a), Some(b)) = (as_float(lhs), as_float(rhs)) {
            let truth = match cmp {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                CmpOp::Lt => a < b,
                CmpOp::Le => a <= b,
                CmpOp::Gt => a > b,
                CmpOp::Ge => a >= b,
            };
            return Ok(Value::Bool(truth));
        }
        match (lhs, rhs, cmp) {
            (Value::Str(a), Value::Str(b), CmpOp::Eq) => Ok(Value::Bool(a == b)),
            (Value::Str(a), Value::Str(b), CmpOp::Ne) => Ok(Value::Bool(a != b)),
            (Value::None, _, CmpOp::Eq) | (_, Value::None, CmpOp::Eq) => Ok(Value::Bool(matches!(
                (lhs, rhs),
                (Value::None, Value::None)
            ))),
            (Value::None, _, CmpOp::Ne) | (_, Value::None, CmpOp::Ne) => Ok(Value::Bool(
                !matches!((lhs, rhs), (Value::None, Value::None)),
            )),
            (Value::Tuple(_), Value::Tuple(_), CmpOp::Eq | CmpOp::Ne) => {
                let (a, b) = (lhs.items().expect("tuple"), rhs.items().expect("tuple"));
                let mut equal = a.len() == b.len();
                for (x, y) in a.iter().zip(&b) {
                    if !equal {
                        break;
                    }
                    let link = self.compare(P::Eq, x, y, span)?;
                    equal = self.truthy(&link, span, "tuple comparison")?;
                }
                Ok(Value::Bool(equal == (cmp == CmpOp::Eq)))
            }
            _ => Err(self.type_error(
                span,
                format!(
                    "cannot compare '{}' with '{}'",
                    lhs.type_name(),
                    rhs.type_name()
                ),
            )),
        }
    }

    /// Python truthiness. A symbolic condition is decided on the current sizes and guarded.
    pub fn truthy(&mut self, value: &Value, span: Span, what: &str) -> Result<bool, FrontendError> {
        Ok(match value {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Tuple(items) => !items.is_empty(),
            Value::List(items) => !items.borrow().is_empty(),
            Value::SymBool(rel) => self.decide(rel, span, what)?,
            Value::Size(expr) => {
                self.decide(&Rel::new(expr.clone(), CmpOp::Ne, Expr::int(0)), span, what)?
            }
            Value::Tensor(_) | Value::Const(_) => {
                return Err(self.unsupported(
                    span,
                    format!("using a tensor's value in '{what}'"),
                    "data-dependent control flow makes Dynamo graph-break",
                ));
            }
            _ => true,
        })
    }

    fn decide(&mut self, rel: &Rel, span: Span, what: &str) -> Result<bool, FrontendError> {
        let Some((graph, env)) = &mut self.capture else {
            return Err(self.unsupported(span, "a condition on a tensor size outside forward", ""));
        };
        env.node_cursor = graph.nodes.len();
        Ok(env.evaluate(
            rel,
            &Origin {
                what: format!("'{what}' on sizes"),
                span: Some(span),
            },
        ))
    }

    // ---- graph building ---------------------------------------------------------------------

    /// Whether this run is inside `forward` (building a graph).
    pub fn is_capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// The tensor operations, on the graph being built (or, outside `forward`, only the
    /// shape queries).
    pub fn ops(&mut self) -> Ops<'_> {
        let const_nodes = &mut self.const_nodes;
        Ops::new(self.capture.as_mut().map(|(graph, env)| Tracing {
            graph,
            env,
            const_nodes,
        }))
    }

    /// A tensor value as an operand; any other value is a type error.
    pub fn tensor_ref(&self, value: &Value, span: Span) -> Result<TensorRef, FrontendError> {
        match value {
            Value::Tensor(id) => Ok(TensorRef::Node(*id)),
            Value::Const(c) => Ok(TensorRef::Const(c.clone())),
            other => Err(self.type_error(
                span,
                format!("expected a Tensor, got {}", other.type_name()),
            )),
        }
    }

    /// Several tensor values as operands, in order.
    pub fn tensor_refs(
        &self,
        values: &[Value],
        span: Span,
    ) -> Result<Vec<TensorRef>, FrontendError> {
        values.iter().map(|v| self.tensor_ref(v, span)).collect()
    }

    /// The node of a tensor value, adding a node for a parameter or constant on first use.
    pub fn node_of(&mut self, value: &Value, span: Span) -> Result<NodeId, FrontendError> {
        let tensor = self.tensor_ref(value, span)?;
        self.ops().node_of(&tensor, span)
    }

    /// The shape of a tensor value.
    pub fn shape_of(&mut self, value: &Value, span: Span) -> Result<Shape, FrontendError> {
        let tensor = self.tensor_ref(value, span)?;
        Ok(self.ops().shape_of(&tensor))
    }

    /// Runs one tensor operation on the graph and wraps its result as a value.
    pub fn tensor_op(
        &mut self,
        op: impl FnOnce(&mut Ops<'_>) -> Result<TensorRef, FrontendError>,
    ) -> Result<Value, FrontendError> {
        Ok(Value::from_tensor(op(&mut self.ops())?))
    }

    /// The tensors a `forward` returned, in order.
    pub fn output_tensors(&mut self, result: &Value) -> Result<Vec<NodeId>, FrontendError> {
        let span = Span { line: 1, col: 1 };
        match result {
            Value::Tensor(_) | Value::Const(_) => Ok(vec![self.node_of(result, span)?]),
            Value::Tuple(_) | Value::List(_) => {
                let mut out = Vec::new();
                for item in result.items().expect("sequence") {
                    match item {
                        Value::Tensor(_) | Value::Const(_) => out.push(self.node_of(&item, span)?),
                        other => {
                            return Err(self.unsupported(
                                span,
                                format!("returning a {} from forward", other.type_name()),
                                "return tensors only",
                            ));
                        }
                    }
                }
                Ok(out)
            }
            other => Err(self.unsupported(
                span,
                format!("returning a {} from forward", other.type_name()),
                "return a tensor or a tuple of tensors",
            )),
        }
    }

    /// A new constant tensor (parameter, buffer or global).
    pub fn new_const(&self, shape: Vec<i64>, init: Init, is_param: bool) -> Value {
        let id = self.program.next_const_id();
        Value::Const(Rc::new(ConstTensor {
            id,
            shape,
            init,
            name: RefCell::new(String::new()),
            is_param,
        }))
    }

    /// Evaluates `scalar` as an operand: number or size.
    pub fn scalar_of(&self, value: &Value) -> Option<Scalar> {
        match value {
            Value::Int(i) => Some(Scalar::Number(*i as f64)),
            Value::Float(f) => Some(Scalar::Number(*f)),
            Value::Bool(b) => Some(Scalar::Number(f64::from(u8::from(*b)))),
            Value::Size(e) => Some(Scalar::Size(e.clone())),
            _ => None,
        }
    }

    /// The `BinaryOp` of a Python operator, if it is elementwise arithmetic.
    pub fn elementwise(op: ast::Operator) -> Option<BinaryOp> {
        match op {
            ast::Operator::Add => Some(BinaryOp::Add),
            ast::Operator::Sub => Some(BinaryOp::Sub),
            ast::Operator::Mult => Some(BinaryOp::Mul),
            ast::Operator::Div => Some(BinaryOp::Div),
            _ => None,
        }
    }
}

/// Finds `name` on a class or its user-written bases.
fn find_method_with(
    interp: &Interp<'_, '_>,
    class: &ast::StmtClassDef,
    name: &str,
) -> Option<Rc<ast::StmtFunctionDef>> {
    for stmt in &class.body {
        if let ast::Stmt::FunctionDef(def) = stmt {
            if def.name.as_str() == name {
                return Some(Rc::new(def.clone()));
            }
        }
    }
    interp
        .user_bases(class)
        .iter()
        .find_map(|base| find_method_with(interp, base, name))
}

/// Whether a class derives from `nn.Module` (directly or through user classes).
fn is_module_class_with(interp: &Interp<'_, '_>, class: &ast::StmtClassDef) -> bool {
    class.bases.iter().any(|base| match base {
        ast::Expr::Attribute(attr) => attr.attr.as_str() == "Module",
        ast::Expr::Name(name) => match interp.lookup_global(name.id.as_str()) {
            Some(Value::Builtin(path)) => path == "torch.nn.Module",
            Some(Value::Class(c)) => is_module_class_with(interp, &c),
            _ => false,
        },
        _ => false,
    })
}

pub(crate) fn find_method(
    program: &Program,
    class: &ast::StmtClassDef,
    name: &str,
) -> Option<Rc<ast::StmtFunctionDef>> {
    find_method_with(&Interp::new(program, None), class, name)
}

pub(crate) fn is_module_class(program: &Program, class: &ast::StmtClassDef) -> bool {
    is_module_class_with(&Interp::new(program, None), class)
}

/// Parameter names of a function that are inputs: no default, `self` skipped for methods.
pub(crate) fn input_names(def: &ast::StmtFunctionDef, is_method: bool) -> Vec<String> {
    def.args
        .posonlyargs
        .iter()
        .chain(&def.args.args)
        .skip(usize::from(is_method))
        .filter(|p| p.default.is_none())
        .map(|p| p.def.arg.to_string())
        .collect()
}

/// Gives every parameter its dotted path from the root (`layers.0.weight`).
pub(crate) fn name_parameters(module: &ModuleRef, prefix: &str) {
    for (name, value) in &module.borrow().attrs {
        match value {
            Value::Module(child) => name_parameters(child, &format!("{prefix}{name}.")),
            Value::Const(c) if c.is_param && c.name.borrow().is_empty() => {
                *c.name.borrow_mut() = format!("{prefix}{name}")
            }
            _ => {}
        }
    }
}

/// `torch.nn` spelled any way becomes one path, so lookups need one table.
fn canonical_module(path: &str) -> String {
    match path {
        "nn" => "torch.nn".into(),
        "F" | "nn.functional" => "torch.nn.functional".into(),
        other => other.to_string(),
    }
}

fn operator_symbol(op: ast::Operator) -> &'static str {
    match op {
        ast::Operator::Add => "+",
        ast::Operator::Sub => "-",
        ast::Operator::Mult => "*",
        ast::Operator::MatMult => "@",
        ast::Operator::Div => "/",
        ast::Operator::Mod => "%",
        ast::Operator::Pow => "**",
        ast::Operator::LShift => "<<",
        ast::Operator::RShift => ">>",
        ast::Operator::BitOr => "|",
        ast::Operator::BitXor => "^",
        ast::Operator::BitAnd => "&",
        ast::Operator::FloorDiv => "//",
    }
}

fn statement_name(stmt: &ast::Stmt) -> String {
    match stmt {
        ast::Stmt::While(_) => "a while loop",
        ast::Stmt::With(_) => "a with statement",
        ast::Stmt::Try(_) | ast::Stmt::TryStar(_) => "try/except",
        ast::Stmt::Raise(_) => "raise",
        ast::Stmt::Delete(_) => "del",
        ast::Stmt::Global(_) | ast::Stmt::Nonlocal(_) => "global/nonlocal",
        ast::Stmt::Match(_) => "a match statement",
        ast::Stmt::AsyncFunctionDef(_) | ast::Stmt::AsyncFor(_) | ast::Stmt::AsyncWith(_) => {
            "async code"
        }
        ast::Stmt::TypeAlias(_) => "a type alias",
        _ => "this statement",
    }
    .to_string()
}

fn statement_note(stmt: &ast::Stmt) -> &'static str {
    match stmt {
        ast::Stmt::While(_) => {
            "Dynamo would unroll it while tracing, or graph-break on a data-dependent condition; write 'for i in range(N)' with a constant N"
        }
        ast::Stmt::Raise(_) | ast::Stmt::Try(_) => "exceptions cause a graph break in Dynamo",
        _ => "",
    }
}

fn expression_name(expr: &ast::Expr) -> String {
    match expr {
        ast::Expr::Lambda(_) => "a lambda",
        ast::Expr::Dict(_) | ast::Expr::DictComp(_) => "a dict",
        ast::Expr::Set(_) | ast::Expr::SetComp(_) => "a set",
        ast::Expr::JoinedStr(_) | ast::Expr::FormattedValue(_) => "an f-string",
        ast::Expr::NamedExpr(_) => "the walrus operator",
        ast::Expr::Await(_) | ast::Expr::Yield(_) | ast::Expr::YieldFrom(_) => {
            "generators and async"
        }
        ast::Expr::Starred(_) => "a starred expression here",
        _ => "this expression",
    }
    .to_string()
}
