//! The model file as the front end reads it: the statements to execute one by one, and the
//! constructs in which Python asks a size for its truth value.
//!
//! Input: the source text. Output: `Chunk`s (top-level statements with their kind, and
//! their text padded so that the VM reports the file's own line numbers), spans in
//! characters from the VM's UTF-8 positions, and for a position inside a condition the
//! construct that decided it (`'if'` at the `if`, `'assert'`, a boolean operator, …), which
//! a guard's origin names.
//! Invariant: every span is the file's own 1-based line and character column.

use super::errors::FrontendError;
use super::nesting;
use crate::graph::Span;
use ruff_text_size::{Ranged, TextRange};
use rustpython_vm::builtins::PyCode;
use rustpython_vm::compiler::ast::token::{TokenKind, Tokens};
use rustpython_vm::compiler::ast::visitor::{self, Visitor};
use rustpython_vm::compiler::ast::{self, Expr, ModModule, Stmt};
use rustpython_vm::compiler::parser::{self, Parsed};

/// The file name the VM compiles the model under; frames with it are the user's.
pub(super) const FILE_NAME: &str = "<model>";

/// Byte offsets at which the lines of `source` start.
fn line_starts(source: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(source.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// 1-based line and column (in characters, as editors count) of a byte offset.
fn span_at(source: &str, line_starts: &[usize], offset: usize) -> Span {
    let offset = offset.min(source.len());
    let line = line_starts.partition_point(|&start| start <= offset);
    let start = line_starts[line - 1];
    let col = source[start..offset].chars().count() + 1;
    Span {
        line: line as u32,
        col: col as u32,
    }
}

/// The module with its tokens, or its syntax error with line:col. It is the parser the VM
/// compiles each chunk with, so both accept the same files.
/// The largest model file Tailor reads: far past any model (nanoGPT's is 16 KB), and a
/// few seconds of parsing.
pub const MAX_SOURCE_BYTES: usize = 8 << 20;

fn parse_module(source: &str, line_starts: &[usize]) -> Result<Parsed<ModModule>, FrontendError> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(FrontendError::Syntax {
            span: Span { line: 1, col: 1 },
            message: format!(
                "the file has {} bytes; Tailor reads at most {MAX_SOURCE_BYTES} (8 MiB)",
                source.len()
            ),
        });
    }
    if let Some(deep) = nesting::too_deep(source) {
        return Err(FrontendError::Syntax {
            span: Span {
                line: deep.line as u32,
                col: 1,
            },
            message: format!(
                "this statement nests about {} levels deep; Tailor takes at most {} (Python's compiler gives up sooner)",
                deep.depth,
                nesting::MAX_NESTING
            ),
        });
    }
    parser::parse_module(source).map_err(|err| FrontendError::Syntax {
        span: span_at(source, line_starts, err.location.start().to_usize()),
        message: err.error.to_string(),
    })
}

/// What `parse` does with a top-level statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ChunkKind {
    /// A definition or import: executed, and an error stops `parse`.
    Definition,
    /// An assignment: executed, and an error skips it (reported).
    Assignment,
    /// A docstring: nothing to run.
    Docstring,
    /// Driver code (calls, loops, `if __name__ == ...`): skipped (reported).
    Driver,
}

/// One top-level statement (or several sharing a line), ready to compile on its own.
#[derive(Clone, Debug)]
pub(super) struct Chunk {
    /// What to do with it.
    pub kind: ChunkKind,
    /// Where its first statement starts.
    pub span: Span,
    /// Its text from the start of its first line (after the file's `from __future__`
    /// imports on a line of their own, which must come first in every compiled piece).
    pub code: String,
    /// How many lines its code is ahead of the file: its compiled code's lines are moved
    /// down by this many (`load::compile_chunk`), rather than padded with blank lines,
    /// which made a file of N one-line statements cost N² to load.
    pub line_offset: usize,
    /// The names its assignments bind (`N = …`, `a, b = …`): what a later `NameError`
    /// names when this chunk was skipped.
    pub binds: Vec<String>,
}

/// The names an assignment statement binds at module level.
fn bound_names(stmt: &Stmt) -> Vec<String> {
    fn names(target: &Expr, into: &mut Vec<String>) {
        match target {
            Expr::Name(name) => into.push(name.id.to_string()),
            Expr::Tuple(tuple) => tuple.elts.iter().for_each(|t| names(t, into)),
            Expr::List(list) => list.elts.iter().for_each(|t| names(t, into)),
            Expr::Starred(starred) => names(&starred.value, into),
            _ => {}
        }
    }
    let mut bound = Vec::new();
    match stmt {
        Stmt::Assign(assign) => assign.targets.iter().for_each(|t| names(t, &mut bound)),
        Stmt::AnnAssign(assign) => names(&assign.target, &mut bound),
        Stmt::AugAssign(assign) => names(&assign.target, &mut bound),
        _ => {}
    }
    bound
}

/// The construct whose condition asked a size for its truth value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Decision {
    /// The construct as guard origins name it: `if`, `assert`, `condition`, ….
    pub what: &'static str,
    /// Where the construct starts.
    pub span: Span,
}

/// A region of the file whose truth tests belong to one construct.
#[derive(Clone, Copy, Debug)]
struct Site {
    start: usize,
    end: usize,
    /// Expression-level constructs win over the statement around them on equal regions
    /// (`if a and b:` is decided by the `and`).
    expression: bool,
    decision: Decision,
}

/// The model file: text, statements and decision sites.
#[derive(Debug)]
pub(super) struct UserSource {
    text: String,
    line_starts: Vec<usize>,
    chunks: Vec<Chunk>,
    definitions: Vec<(String, Span)>,
    sites: Vec<Site>,
    asserts: Vec<(usize, usize, Span)>,
}

impl UserSource {
    /// Parses `text` (a syntax error is reported with its line:col).
    pub fn parse(text: &str) -> Result<UserSource, FrontendError> {
        let line_starts = line_starts(text);
        let parsed = parse_module(text, &line_starts)?;
        let (body, tokens) = (parsed.suite(), parsed.tokens());
        let mut source = UserSource {
            text: text.to_string(),
            line_starts,
            chunks: Vec::new(),
            definitions: Vec::new(),
            sites: Vec::new(),
            asserts: Vec::new(),
        };
        source.chunks = source.split(body, tokens);
        source.definitions = body
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::ClassDef(def) => Some((def.name.to_string(), stmt)),
                Stmt::FunctionDef(def) if !def.is_async => Some((def.name.to_string(), stmt)),
                _ => None,
            })
            .map(|(name, stmt)| (name, source.span_of(keyword_offset(stmt, tokens))))
            .collect();
        let mut collector = SiteCollector {
            source: &source,
            sites: Vec::new(),
            asserts: Vec::new(),
            depth: 0,
        };
        collector.visit_body(body);
        let (sites, asserts) = (collector.sites, collector.asserts);
        source.sites = sites;
        source.asserts = asserts;
        Ok(source)
    }

    /// The whole file.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The top-level statements in order.
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Where the last top-level class or function called `name` is defined.
    pub fn definition_span(&self, name: &str) -> Span {
        self.definitions
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or(Span { line: 1, col: 1 }, |(_, span)| *span)
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text(&self, line: u32) -> &str {
        self.text
            .lines()
            .nth(line.saturating_sub(1) as usize)
            .unwrap_or("")
    }

    /// The byte offset of a VM position: 1-based line, 1-based UTF-8 column.
    fn offset(&self, line: usize, utf8_col: usize) -> usize {
        let start = self
            .line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len());
        (start + utf8_col.saturating_sub(1)).min(self.text.len())
    }

    fn span_of(&self, offset: usize) -> Span {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        span_at(&self.text, &self.line_starts, offset)
    }

    /// The span of a VM position (UTF-8 column) in characters.
    pub fn span(&self, line: usize, utf8_col: usize) -> Span {
        self.span_of(self.offset(line, utf8_col))
    }

    /// The construct deciding a truth test at this VM position, if the position is in a
    /// condition: the smallest site around it.
    pub fn decision_at(&self, line: usize, utf8_col: usize) -> Option<Decision> {
        let offset = self.offset(line, utf8_col);
        self.sites
            .iter()
            .filter(|site| site.start <= offset && offset < site.end.max(site.start + 1))
            .min_by_key(|site| (site.end - site.start, !site.expression))
            .map(|site| site.decision)
    }

    /// The `assert` statement around this VM position.
    pub fn assert_at(&self, line: usize, utf8_col: usize) -> Option<Span> {
        let offset = self.offset(line, utf8_col);
        self.asserts
            .iter()
            .filter(|(start, end, _)| *start <= offset && offset <= *end)
            .min_by_key(|(start, end, _)| end - start)
            .map(|(_, _, span)| *span)
    }

    fn split(&self, body: &[Stmt], tokens: &Tokens) -> Vec<Chunk> {
        let mut chunks: Vec<Chunk> = Vec::new();
        let (mut last_line, mut last_end) = (0, 0);
        let mut futures: Vec<&str> = Vec::new();
        for stmt in body {
            let span = self.span_of(keyword_offset(stmt, tokens));
            // A decorated definition's text begins at its first decorator.
            let first = self.span_of(stmt.start().to_usize()).line as usize;
            let line_start = self.line_starts[first - 1];
            let end = stmt.end().to_usize();
            match chunks.last_mut() {
                // Statements sharing a line (`import torch; import math`) run together.
                Some(chunk) if first <= last_line => {
                    chunk.code.push_str(&self.text[last_end..end]);
                    chunk.binds.extend(bound_names(stmt));
                }
                _ => {
                    let text = &self.text[line_start..end];
                    let (code, line_offset) = if futures.is_empty() {
                        (text.to_string(), first - 1)
                    } else {
                        // The future imports take a line of their own ahead of the text.
                        (format!("{}\n{text}", futures.join("; ")), first - 2)
                    };
                    chunks.push(Chunk {
                        kind: kind_of(stmt),
                        span,
                        code,
                        line_offset,
                        binds: bound_names(stmt),
                    });
                }
            }
            if is_future_import(stmt) {
                futures.push(&self.text[stmt.start().to_usize()..end]);
            }
            last_line = self.span_of(end).line as usize;
            last_end = end;
        }
        chunks
    }
}

/// Where a statement starts for its span: a decorated definition at its `async`, `def` or
/// `class` keyword, the line a reader looks for, though the parser's range begins at the
/// first decorator.
fn keyword_offset(stmt: &Stmt, tokens: &Tokens) -> usize {
    let last_decorator = match stmt {
        Stmt::FunctionDef(def) => def.decorator_list.last(),
        Stmt::ClassDef(def) => def.decorator_list.last(),
        _ => None,
    };
    let Some(decorator) = last_decorator else {
        return stmt.start().to_usize();
    };
    tokens
        .after(decorator.end())
        .iter()
        .find(|token| !token.kind().is_trivia() && token.kind() != TokenKind::Newline)
        .map_or(stmt.start(), Ranged::start)
        .to_usize()
}

fn is_future_import(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::ImportFrom(import)
        if import.module.as_ref().is_some_and(|module| module.as_str() == "__future__"))
}

/// What `parse` does with a module-level statement.
fn kind_of(stmt: &Stmt) -> ChunkKind {
    match stmt {
        // An `async def` defines a coroutine, not a model: driver code.
        Stmt::FunctionDef(def) if def.is_async => ChunkKind::Driver,
        Stmt::FunctionDef(_) | Stmt::ClassDef(_) | Stmt::Import(_) | Stmt::ImportFrom(_) => {
            ChunkKind::Definition
        }
        Stmt::Assign(_) | Stmt::AnnAssign(_) => ChunkKind::Assignment,
        // `try: from torch.nn.functional import sdpa; SDPA = True except ImportError: SDPA =
        // False` (Whisper): setup, run as an assignment is (an escaping error skips it). A
        // handler may also say why it fell back (`warnings.warn(...)`, a log, `raise`), as
        // pytorch-tcn's `weight_norm` import does.
        Stmt::Try(attempt)
            if is_setup(&attempt.body)
                && is_setup(&attempt.orelse)
                && is_setup(&attempt.finalbody)
                && attempt.handlers.iter().all(|handler| match handler {
                    ast::ExceptHandler::ExceptHandler(handler) => handler.body.iter().all(|stmt| {
                        is_setup(std::slice::from_ref(stmt))
                            || matches!(stmt, Stmt::Expr(_) | Stmt::Raise(_))
                    }),
                }) =>
        {
            ChunkKind::Assignment
        }
        Stmt::Expr(e) if e.value.is_literal_expr() => ChunkKind::Docstring,
        _ => ChunkKind::Driver,
    }
}

/// Whether `body` only imports, defines, assigns or passes.
fn is_setup(body: &[Stmt]) -> bool {
    body.iter().all(|stmt| {
        matches!(stmt, Stmt::Pass(_))
            || matches!(kind_of(stmt), ChunkKind::Definition | ChunkKind::Assignment)
    })
}

/// Walks the file once, noting each construct that decides a truth test.
struct SiteCollector<'s> {
    source: &'s UserSource,
    sites: Vec<Site>,
    asserts: Vec<(usize, usize, Span)>,
    /// How many expressions the walk is inside: it stops descending at
    /// `MAX_EXPRESSION_DEPTH`, past which the VM's compiler refuses the statement anyway
    /// (`RecursionError`), so that `1+1+…+1` with 100,000 terms cannot exhaust the stack.
    depth: usize,
}

/// How deep the site walk follows nested expressions (RustPython's compiler gives up at a
/// few hundred levels).
const MAX_EXPRESSION_DEPTH: usize = 1_000;

impl SiteCollector<'_> {
    fn add(&mut self, region: TextRange, expression: bool, what: &'static str, at: TextRange) {
        self.sites.push(Site {
            start: region.start().to_usize(),
            end: region.end().to_usize(),
            expression,
            decision: Decision {
                what,
                span: self.source.span_of(at.start().to_usize()),
            },
        });
    }

    /// A statement's test decides at the test and at the keyword itself.
    fn add_statement(&mut self, stmt: TextRange, test: TextRange, what: &'static str) {
        self.add(test, false, what, stmt);
        let keyword = TextRange::new(stmt.start(), stmt.start());
        self.add(keyword, false, what, stmt);
    }

    fn note_stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::If(s) => self.add_statement(s.range, s.test.range(), "if"),
            Stmt::While(s) => self.add_statement(s.range, s.test.range(), "while"),
            Stmt::Assert(s) => {
                self.add_statement(s.range, s.test.range(), "assert");
                let (start, end) = (s.range.start().to_usize(), s.range.end().to_usize());
                let span = self.source.span_of(start);
                self.asserts.push((start, end, span));
            }
            _ => {}
        }
    }

    fn note_expr(&mut self, expr: &Expr) {
        match expr {
            Expr::BoolOp(e) => self.add(e.range, true, "condition", e.range),
            Expr::If(e) => self.add(e.test.range(), true, "conditional expression", e.range),
            Expr::UnaryOp(e) if e.op == ast::UnaryOp::Not => {
                self.add(e.range, true, "not", e.range)
            }
            Expr::Compare(e) => {
                if e.ops
                    .iter()
                    .any(|op| matches!(op, ast::CmpOp::In | ast::CmpOp::NotIn))
                {
                    self.add(e.range, true, "in", e.range);
                } else if e.ops.len() > 1 {
                    self.add(e.range, true, "comparison", e.range);
                }
            }
            Expr::Call(call) if matches!(&*call.func, Expr::Name(name) if name.id.as_str() == "bool") => {
                self.add(call.range(), true, "bool()", call.range())
            }
            Expr::ListComp(ast::ExprListComp {
                generators, range, ..
            })
            | Expr::SetComp(ast::ExprSetComp {
                generators, range, ..
            })
            | Expr::Generator(ast::ExprGenerator {
                generators, range, ..
            })
            | Expr::DictComp(ast::ExprDictComp {
                generators, range, ..
            }) => {
                for condition in generators.iter().flat_map(|g| &g.ifs) {
                    self.add(condition.range(), true, "comprehension filter", *range);
                }
            }
            _ => {}
        }
    }
}

/// Each node is noted before its children, so on equal regions the outer construct comes
/// first (a comprehension filter `if a and b` is decided by the filter).
impl<'a> Visitor<'a> for SiteCollector<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        self.note_stmt(stmt);
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.depth >= MAX_EXPRESSION_DEPTH {
            return;
        }
        self.depth += 1;
        self.note_expr(expr);
        visitor::walk_expr(self, expr);
        self.depth -= 1;
    }

    /// An `elif` is a clause of its `if` here, not a nested `if` statement, yet it decides
    /// like one, at its own keyword.
    fn visit_elif_else_clause(&mut self, clause: &'a ast::ElifElseClause) {
        if let Some(test) = &clause.test {
            self.add_statement(clause.range, test.range(), "if");
        }
        visitor::walk_elif_else_clause(self, clause);
    }
}

/// The position of the instruction at byte offset `lasti` of `code`.
pub(super) fn instruction_position(code: &PyCode, lasti: usize) -> Option<(usize, usize)> {
    let (start, _) = code.code.locations.get(lasti / 2)?;
    Some((start.line.get(), start.character_offset.get()))
}
