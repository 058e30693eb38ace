//! Language-neutral messages: what the page translates, as an id and positional arguments.
//!
//! Input: a guard's `Provenance` or an `Error` (`message()` on each). Output: a `Message`,
//! serialised as `{ id, args }` for the page, whose `i18n.js` holds the text of every
//! `msg.<id>` in each language (`t("msg." + id, ...args)`). Invariant: Rust never words a
//! message in a language here; every `Display` of the values that make messages stays the
//! English text the CLI, the trace and the snapshots print. Arguments are what no table can
//! translate: names from the user's code, numbers, shapes, and the words of PyTorch or
//! Python, passed verbatim (the translated frame says whose words they are).

use serde::Serialize;

/// One message for the page: which text, and the values filled into its `{0}`, `{1}`, ….
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Message {
    /// Which text.
    pub id: MessageId,
    /// The positional arguments, printed.
    pub args: Vec<String>,
}

impl Message {
    /// `id` with `args`, each printed with its `Display`.
    pub fn new(id: MessageId, args: &[&dyn std::fmt::Display]) -> Message {
        Message {
            id,
            args: args.iter().map(|arg| arg.to_string()).collect(),
        }
    }
}

/// Declares `MessageId` and its list `MessageId::ALL` from one list, so they cannot drift.
macro_rules! message_ids {
    ($($(#[doc = $doc:literal])* $id:ident,)*) => {
        /// Every message the page translates (`msg.<id>` in `www/js/i18n.js`, the id in
        /// camelCase). Each variant's doc lists its arguments in order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
        #[serde(rename_all = "camelCase")]
        pub enum MessageId {
            $($(#[doc = $doc])* $id,)*
        }

        impl MessageId {
            /// Every id, in declaration order (the test checks each has its translations).
            pub const ALL: &[MessageId] = &[$(MessageId::$id,)*];
        }
    };
}

message_ids! {
    // Where a guard came from (`guard::Provenance`).
    /// An unmarked tensor's DIMENSION_DYNAMIC_MARKING_GUARD.
    ProvenanceUnmarked,
    /// [dim, value]: a traced symbol that tracing fixed to a constant.
    ProvenanceFixedSymbol,
    /// [dim, other]: duck sizing shared a symbol between two equal sizes.
    ProvenanceDuckSizing,
    /// [dim, value]: tracing solved a dim to an expression.
    ProvenanceSolved,
    /// A contiguous input's stride.
    ProvenanceContiguous,
    /// A symbolic float's implicit `not math.isnan`.
    ProvenanceNanSpecialization,
    /// [min, max]: a `mark_dynamic` range.
    ProvenanceMarkDynamic,
    /// [min, max, range]: a `mark_dynamic` range, narrowed while tracing.
    ProvenanceMarkDynamicNarrowed,
    /// The default range from 0/1 specialisation.
    ProvenanceZeroOne,
    /// [range]: a range narrowed while tracing.
    ProvenanceNarrowed,
    /// An int argument's EQUALS_MATCH.
    ProvenanceIntConstant,
    /// A symbolic int's TYPE_MATCH.
    ProvenanceIntSymbol,
    /// A bool argument's guard.
    ProvenanceBool,
    /// A float argument's EQUALS_MATCH.
    ProvenanceFloatConstant,
    /// A symbolic float's TYPE_MATCH.
    ProvenanceFloatSymbol,
    /// A tensor's TENSOR_MATCH.
    ProvenanceTensorMatch,
    /// NO_TENSOR_ALIASING.
    ProvenanceNoAliasing,
    /// A module's `training` flag.
    ProvenanceTrainingMode,
    /// Another module attribute the trace read.
    ProvenanceModuleAttribute,
    /// [op]: an op's shape rule asked.
    AskedByOp,
    /// [op, line, col].
    AskedByOpAt,
    /// [construct]: a construct of the user's code decided on sizes.
    AskedBySizeCondition,
    /// [construct, line, col].
    AskedBySizeConditionAt,
    /// [construct, name]: a construct decided on a symbolic float.
    AskedByFloatCondition,
    /// [construct, name, line, col].
    AskedByFloatConditionAt,

    // A guard's symbol form where it is words (`guard::SymbolicForm`, the page's tensor and
    // aliasing guards).
    /// [input]: an unmarked input.
    SymbolicUnmarked,
    /// [name]: a symbolic float argument is a number.
    SymbolicNotNan,
    /// [input, rank, sizes]: a tensor's TENSOR_MATCH (`*` a dynamic size).
    SymbolicTensor,
    /// Tensor inputs share no memory.
    SymbolicNoAliasing,

    // The front end (`frontend::FrontendError`).
    /// [Python's message]: the file is not valid Python.
    SyntaxError,
    /// [construct]: outside the supported subset.
    Unsupported,
    /// [construct, note].
    UnsupportedWithNote,
    /// [name].
    NameNotDefined,
    /// [name, where its assignment is, why it was skipped].
    NameSkipped,
    /// [Python's `TypeName: message`].
    PythonError,
    /// A failed `assert`.
    AssertionFailed,
    /// [lines]: the step budget ran out.
    StepBudget,
    /// [ops]: one capture's graph grew past its limit.
    GraphTooLarge,
    /// [seconds]: a script's wall-time limit.
    Deadline,
    /// [shape, elements, limit, budget].
    TensorTooLarge,
    /// [name, found].
    NoEntry,
    /// The file defines nothing to compile.
    EmptyFile,
    /// [op, the reference's error in English].
    EagerOpFailed,
    /// [what, note]: a graph break Tailor does not model.
    BreakNotModelled,
    /// [input, elements, limit].
    ProbeTooLarge,
    /// [target graph, breaks passed].
    ReplayDiverged,
    /// [the compiled call's error in English].
    CompiledCallFailed,
    /// [function]: a resume function past the recompile limit.
    ResumeAtRecompileLimit,

    // Shapes (`shape::ShapeError`).
    /// [op, detail, lhs, rhs].
    ShapeMismatch,
    /// [op, detail].
    ShapeInvalid,
    /// [op, shape, strides, target]: `view` of memory the target cannot view.
    NotViewable,
    /// [PyTorch's ConstraintViolationError text].
    ConstraintViolation,

    // Dtypes (`graph::DTypeError`).
    /// [op, operand, dtype].
    DTypeNeedsFloat,
    /// [PyTorch's message].
    DTypeRefused,

    // Inputs and marks (`spec::InputError`).
    /// [text]: not `NAME=VALUE`.
    MalformedNotNameValue,
    /// [text, name].
    MalformedGivenTwice,
    /// [text, value].
    MalformedNotInt,
    /// [text, value].
    MalformedNotFloat,
    /// [text, dtype name].
    MalformedUnknownDType,
    /// [text, size].
    MalformedNegativeSize,
    /// [text, value].
    MalformedNotSize,
    /// [text, part (`dim`, `MIN`, `MAX`), value].
    MalformedMarkNumber,
    /// [text].
    MalformedMaxBelowMin,
    /// [text].
    MalformedMarkForm,
    /// [text].
    MalformedStaticMark,
    /// [name, known].
    UnknownInput,
    /// [name, expected].
    MissingInput,
    /// [input, rank, dim].
    NoSuchDim,

    // The CPU reference (`graph::EvalError`).
    /// [node, expr].
    EvalSize,
    /// [node, elements, limit, budget].
    EvalTooLarge,
    /// [input, expected, actual].
    EvalInputShape,
    /// [node, id, rows].
    EvalIdOutOfRange,

    // Compiling (`compile::CompileError`, `lower::LowerError`).
    /// [pass, detail].
    VerifyFailed,
    /// [node, name, shape].
    SymbolicParam,
    /// [node, op, reason].
    LowerUnsupported,

    // Running (`runtime::RunError`).
    /// [input, elements, limit, budget].
    InputTooLarge,
    /// [input, size, dim].
    NegativeSize,
    /// [input, dtype, value].
    NotCarried,
    /// [expected, actual].
    InputCount,
    /// [input, actual, expected].
    InputShape,
    /// [expected, actual].
    IntCount,
    /// [input, actual, expected].
    IntValue,
    /// [what, expr].
    RunSize,
    /// [total, buffer, its bytes, budget].
    OverBudget,
    /// [kernel, ops, extents, limit].
    TooMuchWork,
    /// [kernel, offset, buffer, elements].
    OutOfBounds,

    // The GPU (`runtime::gpu::GpuError`).
    /// [wgpu's reason].
    NoAdapter,
    /// [wgpu's reason].
    GpuDevice,
    /// [wgpu's reason].
    DeviceLost,
    /// [kernels].
    OutOfMemory,
    /// [kernel, limit, needed, max].
    GpuLimit,
    /// [what, wgpu's message].
    GpuRejected,
    /// [wgpu's reason].
    ReadBack,
    /// [kernel, detail].
    StaticSizes,

    // Files (`weights::WeightsError`).
    /// [file, reason].
    WeightsFormat,
    /// [file, name, dtype].
    WeightsDType,
    /// [file, name, dtype]: an inputs file's tensor (ints and bools are arguments).
    WeightsDTypeInputs,
    /// [entry].
    NotAModule,
    /// [entry].
    WeightsAfterCall,
    /// [PyTorch's load_state_dict text].
    StateDict,
    /// [entry, arguments, keys missing or unexpected].
    InputsFileArguments,
    /// [name, value].
    InputsNotCarried,
    /// [reason].
    WriteOutputs,
    /// [the parser's words, with the line]: a PyTorch trace that cannot be read.
    TraceUnreadable,

    // Anything else.
    /// [English text]: a message built from another error's text.
    CallFailed,
    /// [entry, reason]: a run's sizes fail the entry's guards.
    GuardsFailed,
}
