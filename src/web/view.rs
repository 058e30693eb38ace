//! What the page draws, as plain serialisable data: entries with their guards, the graph with
//! spans and printed lines, shape events per node, call records.
//!
//! Input: the compiler's values (`CodeCache`, `Entry`, `CallEvent`). Output: camelCase
//! structs that `convert::to_js` turns into JS objects. Invariant: views are read-only
//! copies; every text in them is the compiler's own printed form, so the page never
//! re-derives a shape or a guard.

use super::breaks;
use super::parts::{NodeView, ReasonView, SpanView, node_views, reason_views, span_view};
use crate::cache::{CallEvent, CodeCache, DimSpec, Entry, ValueSpec};
use crate::guard::{GuardKind, GuardSet, Provenance, TensorGuard, ValueMatch};
use crate::message::{Message, MessageId};
use crate::symbolic::{SymbolNames, SymbolNaming};
use crate::trace::Stage;
use serde::Serialize;

/// One input dim as an entry sees it.
#[derive(Serialize)]
pub(super) struct DimView {
    /// `8`, or the symbol / expression (`s0`).
    text: String,
    /// The size, when static.
    value: Option<i64>,
    /// The range's ends, when symbolic (`max: null` is unbounded).
    min: Option<i64>,
    max: Option<i64>,
}

/// An input's dims; for an int or bool argument (`python` is `int` or `bool`), its one
/// value as a dim (a constant, or an int's symbol).
#[derive(Serialize)]
pub(super) struct InputView {
    name: String,
    dims: Vec<DimView>,
    python: Option<&'static str>,
}

fn dim_view(dim: &DimSpec, names: &SymbolNames) -> DimView {
    match dim.named(names) {
        DimSpec::Static(v) => DimView {
            text: v.to_string(),
            value: Some(v),
            min: None,
            max: None,
        },
        DimSpec::Dynamic { sym, min, max } => DimView {
            text: sym,
            value: None,
            min,
            max,
        },
    }
}

/// The entry's inputs, their symbols shown with `names`.
fn input_views(entry: &Entry, names: &SymbolNames) -> Vec<InputView> {
    let tensors = entry.inputs.iter().map(|(name, dims)| InputView {
        name: name.clone(),
        dims: dims.iter().map(|dim| dim_view(dim, names)).collect(),
        python: None,
    });
    let values = entry.values.iter().map(|(name, value)| match value {
        ValueSpec::Int(dim) => InputView {
            name: name.clone(),
            dims: vec![dim_view(dim, names)],
            python: Some("int"),
        },
        ValueSpec::Bool(b) => InputView {
            name: name.clone(),
            dims: vec![DimView {
                text: if *b { "True" } else { "False" }.into(),
                value: Some(i64::from(*b)),
                min: None,
                max: None,
            }],
            python: Some("bool"),
        },
        ValueSpec::Float(value) => InputView {
            name: name.clone(),
            dims: vec![DimView {
                text: value.map_or_else(|| name.clone(), crate::guard::python_float),
                value: None,
                min: None,
                max: None,
            }],
            python: Some("float"),
        },
    });
    tensors.chain(values).collect()
}

/// One printed guard.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GuardView {
    /// `tensor`, `aliasing`, `input_equality`, `stride`, `recorded`, `range` or
    /// `dimension_marking`.
    kind: &'static str,
    /// PyTorch's source form (`2 <= L['x'].size()[0]`, `TENSOR_MATCH: …`).
    source: String,
    /// The failure-reason form.
    reason: String,
    /// The symbol form (`2 <= s0`).
    symbolic: String,
    /// The symbol form as a message where it is words (`x is not marked dynamic`), else
    /// null (the form is code).
    symbolic_message: Option<Message>,
    /// Where it came from, in English words.
    provenance: String,
    /// The same as a message for the page's languages: `{ id, args }`.
    provenance_message: Message,
    /// The source line of the op or branch that recorded it, when there is one.
    span: Option<SpanView>,
}

impl GuardView {
    /// A guard view without a source position.
    fn new(
        kind: &'static str,
        source: String,
        reason: String,
        symbolic: String,
        provenance: &Provenance,
    ) -> GuardView {
        GuardView {
            kind,
            source,
            reason,
            symbolic,
            symbolic_message: None,
            provenance: provenance.to_string(),
            provenance_message: provenance.message(),
            span: None,
        }
    }
}

fn kind_name(kind: GuardKind) -> &'static str {
    match kind {
        GuardKind::InputEquality => "input_equality",
        GuardKind::Stride => "stride",
        GuardKind::Recorded => "recorded",
        GuardKind::Range => "range",
        GuardKind::DimensionMarking => "dimension_marking",
    }
}

/// The printed guards of an entry: one `value` guard per int or bool argument, one `tensor`
/// guard per tensor, the aliasing guard when there are several tensors, one `attribute`
/// guard per module attribute the trace read, then the shape guards
/// (`GuardSet::source_lines`' order).
pub(super) fn guard_views(entry: &Entry) -> Vec<GuardView> {
    let values = entry.guards.values.iter().map(|value| {
        let provenance = match value.expected {
            ValueMatch::Int(Some(_)) => Provenance::IntConstant,
            ValueMatch::Int(None) => Provenance::IntSymbol,
            ValueMatch::Bool(_) => Provenance::Bool,
            ValueMatch::Float(Some(_)) => Provenance::FloatConstant,
            ValueMatch::Float(None) => Provenance::FloatSymbol,
        };
        GuardView::new(
            "value",
            value.to_string(),
            value.reason(),
            value.to_string(),
            &provenance,
        )
    });
    let tensors = entry.guards.tensors.iter().map(tensor_view);
    let mut views: Vec<GuardView> = values.chain(tensors).collect();
    if let Some(aliasing) = entry.guards.aliasing() {
        views.push(GuardView {
            symbolic_message: Some(Message::new(MessageId::SymbolicNoAliasing, &[])),
            ..GuardView::new(
                "aliasing",
                aliasing,
                "tensor inputs alias".into(),
                "no two inputs share memory".into(),
                &Provenance::NoAliasing,
            )
        });
    }
    views.extend(entry.guards.lifted.iter().map(tensor_view));
    views.extend(entry.guards.attributes.iter().map(|attribute| {
        let provenance = if attribute.path.name == "training" {
            Provenance::TrainingMode
        } else {
            Provenance::ModuleAttribute
        };
        GuardView::new(
            "attribute",
            attribute.to_string(),
            attribute.reason(),
            attribute.reason(),
            &provenance,
        )
    }));
    for guard in entry.guards.printed() {
        // A recorded guard's origin locates it in the source.
        let span = match &guard.provenance {
            Provenance::Recorded(origin) => origin.span,
            _ => None,
        };
        views.push(GuardView {
            span: span_view(span),
            symbolic_message: guard.symbolic.message(),
            ..GuardView::new(
                kind_name(guard.kind),
                guard.source.clone(),
                guard.reason.clone(),
                guard.symbolic.to_string(),
                &guard.provenance,
            )
        });
    }
    views
}

/// The `TENSOR_MATCH` of an argument or a lifted tensor.
fn tensor_view(tensor: &TensorGuard) -> GuardView {
    let sizes: Vec<String> = tensor
        .sizes
        .iter()
        .map(|s| s.map_or("*".to_string(), |v| v.to_string()))
        .collect();
    let sizes = format!("[{}]", sizes.join(", "));
    GuardView {
        symbolic_message: Some(Message::new(
            MessageId::SymbolicTensor,
            &[&tensor.input, &tensor.sizes.len(), &sizes],
        )),
        ..GuardView::new(
            "tensor",
            tensor.to_string(),
            format!("tensor '{}' rank and static sizes", tensor.input),
            format!(
                "{}: rank {}, sizes {sizes}",
                tensor.input,
                tensor.sizes.len()
            ),
            &Provenance::TensorMatch,
        )
    }
}

/// Pass/fail of every printed guard for a call, in the order of `guard_views`.
pub(super) fn guard_verdicts(
    guards: &GuardSet,
    call: &crate::guard::CallShapes,
    marked: &[bool],
) -> Vec<bool> {
    let mut verdicts = guards.value_verdicts(call);
    let mut ranks_match = verdicts.iter().all(|pass| *pass) && guards.kinds_match(call);
    for (tensor, (_, dims)) in guards.tensors.iter().zip(call.tensors()) {
        let rank_ok = tensor.sizes.len() == dims.len();
        ranks_match &= rank_ok;
        let sizes_ok = tensor
            .sizes
            .iter()
            .zip(dims)
            .all(|(expected, actual)| expected.is_none_or(|e| e == *actual));
        verdicts.push(rank_ok && sizes_ok);
    }
    if guards.aliasing().is_some() {
        verdicts.push(true);
    }
    // A lifted tensor is the program's own: no call changes it.
    verdicts.extend(guards.lifted.iter().map(|_| true));
    verdicts.extend(guards.attribute_verdicts(call));
    let shape = if ranks_match {
        guards.shape_verdicts(call, marked)
    } else {
        vec![false; guards.shape.len()]
    };
    // `printed` drops the second copy of a two-sided range guard; both copies must pass.
    let mut previous: Option<&crate::guard::Guard> = None;
    for (guard, pass) in guards.shape.iter().zip(shape) {
        if previous == Some(guard) {
            if let Some(last) = verdicts.last_mut() {
                *last &= pass;
            }
        } else {
            verdicts.push(pass);
        }
        previous = Some(guard);
    }
    verdicts
}

/// An entry of the cache.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EntryView {
    /// Compile order (PyTorch's `0/N`).
    id: usize,
    /// The wrapper that compiled it.
    wrapper: usize,
    /// `None`, `True` or `False`: that wrapper's `dynamic=`.
    mode: String,
    /// Position in lookup order (0 is checked first).
    lookup_position: usize,
    /// Input dims as the entry sees them.
    inputs: Vec<InputView>,
    /// Its guards.
    guards: Vec<GuardView>,
}

/// Entries in compile order, their symbols named by `naming`.
pub(super) fn entry_views(cache: &CodeCache, naming: SymbolNaming) -> Vec<EntryView> {
    cache
        .entries()
        .into_iter()
        .map(|entry| entry_view(cache, entry, naming))
        .collect()
}

pub(super) fn entry_view(cache: &CodeCache, entry: &Entry, naming: SymbolNaming) -> EntryView {
    let names = entry.env.symbol_names(naming);
    names.show(|| EntryView {
        id: entry.id,
        wrapper: entry.wrapper,
        mode: entry.config.dynamic.to_string(),
        lookup_position: cache
            .entries_mru()
            .iter()
            .position(|e| e.id == entry.id)
            .unwrap_or(0),
        inputs: input_views(entry, &names),
        guards: guard_views(entry),
    })
}

/// Milliseconds spent in each phase of a call.
#[derive(Serialize)]
pub(super) struct TimingView {
    /// Checking the entries' guards.
    guard: f64,
    /// Capture, guards and, for a compile, building its kernels (`build`).
    compile: f64,
    /// Uploading the inputs, running the kernels and reading the outputs back; for a call
    /// that is not a compile (eager), building its kernels too.
    run: f64,
    /// Lowering, WGSL emission, parameter upload and pipeline creation.
    build: f64,
    /// The CPU's part of `run` on the GPU: buffers and bind groups found or made, inputs
    /// written, passes recorded and submitted (the rest is the device and read-back).
    host: f64,
}

/// What a call spent on its kernels, in ms, as the device measured it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CallTimes {
    /// Building the kernels (0 when the entry already had them).
    pub build: f64,
    /// Running them.
    pub run: f64,
    /// The host CPU's part of running them.
    pub host: f64,
}

/// What a call did.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CallView {
    /// Position in the cache's call log.
    index: usize,
    /// The wrapper called.
    wrapper: usize,
    /// The sizes, as `x=8,64`.
    shapes: String,
    /// `compile`, `hit`, `eager` or `error`.
    action: String,
    /// The entry that ran.
    entry: Option<usize>,
    /// The first failing guard of each entry checked, in lookup order.
    reasons: Vec<ReasonView>,
    /// The error, for `error`, in English.
    error: Option<String>,
    /// The same as a message for the page's languages: `{ id, args }`.
    error_message: Option<Message>,
    /// Where the error points.
    span: Option<SpanView>,
    /// PyTorch's warning when the recompile limit is hit.
    warning: Option<String>,
    /// Why Dynamo skips the code for good (its trace recorded no op), from the call that
    /// decided it on.
    skipped: Option<String>,
    /// The resume functions called after the function's graph breaks, in order (empty when
    /// its graph reaches the return).
    breaks: Vec<breaks::ResumeCallView>,
    /// Timings.
    ms: TimingView,
}

pub(super) fn call_view(index: usize, event: &CallEvent, times: CallTimes) -> CallView {
    let shapes = crate::guard::CallShapes::with_args(event.shapes.clone()).to_spec();
    CallView {
        index,
        wrapper: event.wrapper,
        shapes,
        action: event.action.to_string(),
        entry: event.entry,
        reasons: reason_views(&event.reasons),
        error: event.error.clone(),
        error_message: event.error_message.clone(),
        span: span_view(event.error_span),
        warning: event.warning.clone(),
        skipped: event.skipped.clone(),
        breaks: breaks::resume_call_views(event),
        ms: TimingView::of(event, times),
    }
}

impl TimingView {
    /// A call's phases: the guards and compile as the cache recorded them, the kernels' build
    /// and run as the executor measured them.
    pub(super) fn of(event: &CallEvent, times: CallTimes) -> TimingView {
        let compiled = event.action == crate::cache::Action::Compile;
        TimingView {
            guard: event.guard_ms,
            compile: event.compile_ms + if compiled { times.build } else { 0.0 },
            run: times.run + if compiled { 0.0 } else { times.build },
            build: times.build,
            host: times.host,
        }
    }

    /// The same object serde makes of it, made in one call into JavaScript: what a call's
    /// result gets once its kernels ran.
    pub(super) fn to_js(&self) -> wasm_bindgen::JsValue {
        super::convert::js_times(self.guard, self.compile, self.run, self.build, self.host)
    }
}

/// One step of symbolic reasoning, tagged with the node it happened at.
#[derive(Serialize)]
pub(super) struct EventView {
    node: usize,
    /// `create_symbol`, `static`, `duck_shared`, `guard`, `implied`, `replacement`, `range`.
    kind: &'static str,
    text: String,
}

pub(super) fn event_views(entry: &Entry) -> Vec<EventView> {
    use crate::shape::ShapeEvent;
    entry
        .env
        .events()
        .iter()
        .map(|(node, event)| EventView {
            node: *node,
            kind: match event {
                ShapeEvent::CreateSymbol { .. } => "create_symbol",
                ShapeEvent::Static { .. } => "static",
                ShapeEvent::DuckShared { .. } => "duck_shared",
                ShapeEvent::Guard { .. } => "guard",
                ShapeEvent::Implied { .. } => "implied",
                ShapeEvent::Replacement { .. } => "replacement",
                ShapeEvent::Range { .. } => "range",
            },
            text: event.to_string(),
        })
        .collect()
}

/// A symbol of the entry's ShapeEnv.
#[derive(Serialize)]
pub(super) struct SymbolView {
    sym: String,
    /// The input dim it was created for, source form.
    source: String,
    hint: i64,
    range: String,
    /// What it was replaced by, if anything.
    replaced: Option<String>,
}

/// Everything the step-through shows about one compilation.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CompilationView {
    /// The compiled class or function.
    entry_name: String,
    /// `None`, `True` or `False`.
    mode: String,
    /// The sizes compiled for (`x=8,64`).
    shapes: String,
    /// The library's trace, stage by stage (text forms).
    stages: Vec<Stage>,
    /// Input dims as the entry sees them.
    inputs: Vec<InputView>,
    symbols: Vec<SymbolView>,
    nodes: Vec<NodeView>,
    events: Vec<EventView>,
    guards: Vec<GuardView>,
    /// The compiling call's graphs: forward's, then one per resume function after a graph
    /// break (one graph when forward does not break).
    graphs: Vec<breaks::GraphView>,
}

/// The compilation's view, its symbols named by `naming` (the kernels keep their numbers).
/// `event` is the call that compiled `entry`, whose graph breaks list the other graphs.
pub(super) fn compilation_view(
    cache: &CodeCache,
    entry: &Entry,
    event: &CallEvent,
    shapes: String,
    naming: SymbolNaming,
) -> CompilationView {
    let replacements = entry.env.replacements();
    let names = entry.env.symbol_names(naming);
    let stages = crate::session::trace_of(cache, entry, naming).stages;
    let graphs = breaks::graph_views(cache, event, naming);
    names.show(|| CompilationView {
        entry_name: cache.entry_point().name.clone(),
        mode: entry.config.dynamic.to_string(),
        shapes,
        stages,
        inputs: input_views(entry, &names),
        symbols: entry
            .env
            .symbols()
            .iter()
            .map(|info| SymbolView {
                sym: info.sym.to_string(),
                source: info.source.to_source(),
                hint: info.hint,
                range: info.range.to_string(),
                replaced: replacements.get(&info.sym).map(ToString::to_string),
            })
            .collect(),
        nodes: node_views(&entry.graph),
        events: event_views(entry),
        guards: guard_views(entry),
        graphs,
    })
}
