//! The op table: every tensor operation the `torch` package reaches through
//! `_tailor.op(name, …)`, one entry per op, the way `symbolic/rules.rs` lists its rewrite
//! rules.
//!
//! Input: a call `_tailor.op(name, *args, **kwargs)` from `py/torch`. Output: the call's
//! arguments bound to the entry's schema (positional or by keyword, defaults filled, Python's
//! `TypeError` wording for a missing, extra or unknown argument), then the entry's `build`,
//! which appends the node through `Ops` and its shape rule. The same entries give the
//! `torch` package the methods and functions it generates (`aliases`), and the page's
//! reference panel and `tailor supported` their "how each op compiles" table.
//! Invariant: an op is reached by its entry alone (no `match` on its name; an entry that
//! shares a build passes it its variant, `|c, a| reduce(c, a, ReduceKind::Sum)`);
//! every entry's schema parses, its names are unique, and its `example` compiles, lowers
//! as `lowering` says and agrees with the reference (`tests/it/table.rs`).

use super::call::{Call, Raise};
use super::ops::TensorRef;
use crate::graph::{AttentionMask, BinaryOp, DType, Init, Op, PoolKind, ReduceKind, UnaryOp};
pub use crate::lower::Lowering;
use crate::shape::rules::{ConvWindow, ReshapeKind};
use crate::symbolic::Expr;
use rustpython_vm::builtins::PyFloat;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::LazyLock;

type Built = Result<PyObjectRef, Raise>;

/// One op: how Python calls it, how its shape is computed, how it lowers and what checks it.
pub struct OpEntry {
    /// The name `_tailor.op` is called with.
    pub name: &'static str,
    /// Its arguments in PyTorch's schema notation (`native_functions.yaml`): a type, a name
    /// and an optional default each. Types: `Tensor`, `Tensor?`, `Tensor[]`, `Tensor?[]`,
    /// `Tensor|Scalar` (a tensor or a Python number), `int`, `int[]`, `int[]?` (one int,
    /// several, or None: every dim), `SymInt`, `SymInt[]` (sizes, `-1` inferred), `float`,
    /// `bool`, `str`, `Index[]` (the items of a subscript).
    pub schema: &'static str,
    /// The spellings the `torch` package defines from this entry (`Tensor.relu`,
    /// `torch.relu`, `F.sigmoid`): each takes exactly the schema's arguments.
    pub aliases: &'static [&'static str],
    /// A call that uses it, its node returned, over a `[2, 4, 6, 6]` float tensor `x` and
    /// the parameters `self.table` `[64, 3]`, `self.kernel` `[8, 4, 3, 3]` and
    /// `self.kernel_t` `[4, 3, 2, 2]` (lowering reads embedding tables and convolution
    /// weights from stored tensors).
    pub example: &'static str,
    /// The shape rule: the function that computes it, or its formula in Python.
    pub shape_rule: &'static str,
    /// How lowering turns its node into kernels.
    pub lowering: Lowering,
    /// The reference: the function `graph::eval` and the CPU backend share, or the arm of
    /// `graph::eval` that computes the op (`graph::eval Op::Where`).
    pub reference: &'static str,
    /// Reads the bound arguments and appends the node.
    build: fn(&Call<'_>, &Bound<'_>) -> Built,
}

/// An entry of the table as the page and `tailor supported` show it.
#[derive(Clone, Debug, Serialize)]
pub struct OpRow {
    /// `name(arguments)`.
    pub signature: String,
    /// The spellings the package defines from it.
    pub aliases: Vec<String>,
    /// A call that uses it.
    pub example: String,
    /// The shape rule's function.
    pub shape_rule: String,
    /// The lowering family.
    pub lowering: Lowering,
    /// The reference maths.
    pub reference: String,
}

/// The table, in the order the reference panel lists it.
pub fn rows() -> Vec<OpRow> {
    OPS.iter()
        .map(|entry| OpRow {
            signature: format!("{}({})", entry.name, entry.schema),
            aliases: entry.aliases.iter().map(|a| a.to_string()).collect(),
            example: entry.example.to_string(),
            shape_rule: entry.shape_rule.to_string(),
            lowering: entry.lowering,
            reference: entry.reference.to_string(),
        })
        .collect()
}

/// Every entry, for the tests.
pub fn entries() -> &'static [OpEntry] {
    OPS
}

const fn op(
    name: &'static str,
    schema: &'static str,
    aliases: &'static [&'static str],
    example: &'static str,
    (shape_rule, lowering, reference): (&'static str, Lowering, &'static str),
    build: fn(&Call<'_>, &Bound<'_>) -> Built,
) -> OpEntry {
    OpEntry {
        name,
        schema,
        aliases,
        example,
        shape_rule,
        lowering,
        reference,
        build,
    }
}

const POINTWISE: (&str, Lowering, &str) = (
    "shape::rules::pointwise",
    Lowering::Map,
    "graph::UnaryOp::apply",
);
const BROADCAST: (&str, Lowering, &str) = (
    "shape::rules::broadcast",
    Lowering::Map,
    "graph::BinaryOp::apply",
);
const REDUCE: (&str, Lowering, &str) = (
    "shape::rules::reduce",
    Lowering::Rows,
    "graph::eval::reduce",
);
const ROW: (&str, Lowering, &str) = ("input.shape", Lowering::Rows, "graph::softmax_row");
const RESHAPE: (&str, Lowering, &str) = (
    "shape::rules::reshape_strided",
    Lowering::View,
    "graph::eval Op::Reshape",
);
const PERMUTE: (&str, Lowering, &str) = (
    "[input.shape[d] for d in dims]",
    Lowering::View,
    "graph::eval::permute",
);
const POOL: (&str, Lowering, &str) = ("shape::rules::pool2d", Lowering::Pool, "graph::eval::pool");

const UNARY: &str = "Tensor input";
const BINARY: &str = "Tensor|Scalar input, Tensor|Scalar other";
const REDUCTION: &str = "Tensor input, int[]? dim=None, bool keepdim=False";

/// The ops, grouped as the reference panel shows them: elementwise, reductions and rows,
/// products and windows, views, then the rest.
#[rustfmt::skip]
static OPS: &[OpEntry] = &[
    op("relu", UNARY, &["Tensor.relu", "torch.relu"], "x.relu()", POINTWISE, unary),
    op("gelu", UNARY, &[], "F.gelu(x)", POINTWISE, unary),
    op("silu", UNARY, &[], "F.silu(x)", POINTWISE, unary),
    op("sigmoid", UNARY, &["Tensor.sigmoid", "torch.sigmoid", "F.sigmoid"], "x.sigmoid()", POINTWISE, unary),
    op("tanh", UNARY, &["Tensor.tanh", "torch.tanh", "F.tanh"], "x.tanh()", POINTWISE, unary),
    op("neg", UNARY, &["Tensor.neg", "torch.neg"], "-x", POINTWISE, unary),
    op("exp", UNARY, &["Tensor.exp", "torch.exp"], "x.exp()", POINTWISE, unary),
    op("sqrt", UNARY, &["Tensor.sqrt", "torch.sqrt"], "x.abs().sqrt()", POINTWISE, unary),
    op("log", UNARY, &["Tensor.log", "torch.log"], "(x.abs() + 0.5).log()", POINTWISE, unary),
    op("abs", UNARY, &["Tensor.abs", "torch.abs"], "abs(x)", POINTWISE, unary),
    op("sin", UNARY, &["Tensor.sin", "torch.sin"], "x.sin()", POINTWISE, unary),
    op("cos", UNARY, &["Tensor.cos", "torch.cos"], "x.cos()", POINTWISE, unary),
    op("erf", UNARY, &["Tensor.erf", "torch.erf"], "x.erf()", POINTWISE, unary),
    op("floor", UNARY, &["Tensor.floor", "torch.floor"], "(x * 3).floor()", POINTWISE, unary),
    op("ceil", UNARY, &["Tensor.ceil", "torch.ceil"], "(x * 3).ceil()", POINTWISE, unary),
    op("round", UNARY, &["Tensor.round", "torch.round"], "(x * 3).round()", POINTWISE, unary),
    op("trunc", UNARY, &["Tensor.trunc", "torch.trunc"], "(x * 3).trunc()", POINTWISE, unary),
    op("sign", UNARY, &["Tensor.sign", "torch.sign"], "x.sign()", POINTWISE, unary),
    op("add", BINARY, &["Tensor.add"], "x + x.transpose(2, 3)", BROADCAST, binary),
    op("sub", BINARY, &["Tensor.sub"], "x - 1.5", BROADCAST, binary),
    op("mul", BINARY, &["Tensor.mul"], "x * x[:, :1]", BROADCAST, binary),
    op("div", BINARY, &["Tensor.div"], "x / (x.abs() + 1)", BROADCAST, binary),
    op("eq", BINARY, &[], "x.round() == 0", BROADCAST, binary),
    op("ne", BINARY, &[], "x.round() != 0", BROADCAST, binary),
    op("lt", BINARY, &[], "x < 0.25", BROADCAST, binary),
    op("le", BINARY, &[], "x <= x.transpose(2, 3)", BROADCAST, binary),
    op("gt", BINARY, &[], "x > 0.25", BROADCAST, binary),
    op("ge", BINARY, &[], "x >= 0", BROADCAST, binary),
    op("maximum", BINARY, &["Tensor.maximum", "torch.maximum"], "torch.maximum(x, x.transpose(2, 3))", BROADCAST, binary),
    op("minimum", BINARY, &["Tensor.minimum", "torch.minimum"], "torch.minimum(x, 0.5)", BROADCAST, binary),
    op("pow", "Tensor|Scalar input, Tensor|Scalar exponent", &["Tensor.pow", "torch.pow"], "x.abs() ** 1.7", BROADCAST, binary),
    op("where", "Tensor condition, Tensor|Scalar input, Tensor|Scalar other", &["torch.where"], "torch.where(x > 0, x, 0.5)", ("shape::rules::broadcast", Lowering::Map, "graph::eval Op::Where"), where_),
    op("tril", "Tensor input, int diagonal=0", &["Tensor.tril"], "x.tril()", ("shape::rules::pointwise", Lowering::Map, "graph::eval Op::Triangle"), |c, a| triangle(c, a, false)),
    op("triu", "Tensor input, int diagonal=0", &["Tensor.triu"], "x.triu(1)", ("shape::rules::pointwise", Lowering::Map, "graph::eval Op::Triangle"), |c, a| triangle(c, a, true)),
    op("arange", "int start, SymInt end, int step=1", &[], "torch.arange(x.shape[3])", ("shape::rules::created", Lowering::Map, "graph::eval Op::Arange"), arange),
    op("to", "Tensor input, str dtype", &[], "x.long()", ("shape::rules::pointwise", Lowering::Map, "graph::eval Op::Cast"), to),
    op("embedding", "Tensor input, Tensor weight", &[], "F.embedding((x.abs() * 4).long(), self.table)", ("ids.shape + [weight.shape[1]]", Lowering::Map, "graph::eval::embedding"), embedding),
    op("batch_norm", "Tensor input, Tensor?[] state, int features, float eps", &[], "F.batch_norm(x, torch.zeros(4), torch.ones(4))", ("shape::rules::batch_norm", Lowering::Map, "graph::eval::batch_norm"), batch_norm),
    op("sum", REDUCTION, &["Tensor.sum"], "x.sum(dim=(2, 3))", REDUCE, |c, a| reduce(c, a, ReduceKind::Sum)),
    op("mean", REDUCTION, &["Tensor.mean"], "x.mean(-1, keepdim=True)", REDUCE, |c, a| reduce(c, a, ReduceKind::Mean)),
    op("amax", REDUCTION, &["Tensor.amax"], "x.amax(1)", REDUCE, |c, a| reduce(c, a, ReduceKind::Amax)),
    op("softmax", "Tensor input, int[]? dim", &[], "x.softmax(-1)", ROW, |c, a| softmax(c, a, false)),
    op("log_softmax", "Tensor input, int[]? dim", &[], "F.log_softmax(x, dim=1)", (ROW.0, Lowering::Rows, "graph::log_softmax_row"), |c, a| softmax(c, a, true)),
    op("scaled_dot_product_attention", "Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, bool is_causal=False, float? scale=None", &[], "F.scaled_dot_product_attention(x, x, x, is_causal=True)", ("shape::rules::attention", Lowering::Decomposed, "graph::eval::attention"), attention),
    op("layer_norm", "Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05", &[], "F.layer_norm(x, (6,))", ("shape::rules::layer_norm", Lowering::Rows, "graph::layer_norm_row"), layer_norm),
    op("matmul", "Tensor input, Tensor other", &["Tensor.matmul", "torch.matmul"], "x @ x.transpose(2, 3)", ("shape::rules::matmul", Lowering::Gemm, "graph::eval::matmul"), matmul),
    op("linear", "Tensor input, Tensor weight, Tensor? bias=None", &[], "F.linear(x, torch.randn(5, 6), torch.randn(5))", ("shape::rules::linear", Lowering::Gemm, "graph::eval::linear"), linear),
    op("conv", "Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups=1", &[], "F.conv2d(x, self.kernel, padding=1)", ("shape::rules::conv", Lowering::Conv, "graph::eval::conv"), conv),
    op("conv_transpose", "Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int groups=1", &[], "F.conv_transpose2d(x, self.kernel_t, stride=2)", ("shape::rules::conv_transpose", Lowering::Conv, "graph::eval::conv_transpose"), conv_transpose),
    op("max_pool2d", "Tensor input, int[] kernel_size, int[] stride, int[] padding", &[], "F.max_pool2d(x, 2)", POOL, |c, a| pool(c, a, PoolKind::Max)),
    op("avg_pool2d", "Tensor input, int[] kernel_size, int[] stride, int[] padding", &[], "F.avg_pool2d(x, 3, stride=1, padding=1)", POOL, |c, a| pool(c, a, PoolKind::Avg)),
    op("reshape", "Tensor input, SymInt[] shape", &[], "x.reshape(2, -1)", RESHAPE, |c, a| reshape(c, a, ReshapeKind::Reshape)),
    op("view", "Tensor input, SymInt[] shape", &[], "x.view(2, 4, 36)", RESHAPE, |c, a| reshape(c, a, ReshapeKind::View)),
    op("contiguous", "Tensor input", &[], "x.transpose(1, 2).contiguous()", ("shape::layout::contiguous", Lowering::View, "graph::eval Op::Reshape"), contiguous),
    op("flatten", "Tensor input, int start_dim=0, int end_dim=-1", &["Tensor.flatten"], "x.flatten(1)", RESHAPE, flatten),
    op("unsqueeze", "Tensor input, int dim", &["Tensor.unsqueeze"], "x.unsqueeze(0)", RESHAPE, unsqueeze),
    op("squeeze", "Tensor input, int dim", &["Tensor.squeeze"], "x[:, :1].squeeze(1)", RESHAPE, squeeze),
    op("expand", "Tensor input, SymInt[] size", &[], "x[:, :1].expand(2, 4, 6, 6)", ("shape::rules::expand", Lowering::View, "graph::eval Op::Expand"), expand),
    op("transpose", "Tensor input, int dim0, int dim1", &["Tensor.transpose"], "x.transpose(1, 3)", PERMUTE, transpose),
    op("t", "Tensor input", &["Tensor.t"], "x[0, 0].t()", PERMUTE, t),
    op("transposed", "Tensor input, bool matrix", &[], "x.mT", PERMUTE, transposed),
    op("permute", "Tensor input, int[] dims", &[], "x.permute(0, 2, 3, 1)", PERMUTE, permute),
    op("index", "Tensor input, Index[] indices", &[], "x[:, 1, ::2]", ("shape::rules::slice", Lowering::View, "graph::eval Op::Slice"), index),
    op("constant_pad", "Tensor input, int dim, SymInt before, SymInt after, float value=0.0", &[], "F.pad(x, (1, 2))", ("shape::rules::constant_pad", Lowering::View, "graph::eval::pad"), constant_pad),
    op("upsample_linear", "Tensor input, int dim, SymInt size, bool align_corners=False", &[], "F.interpolate(x, scale_factor=2, mode='bilinear')", ("shape::rules::resized", Lowering::View, "graph::eval::upsample_linear"), upsample_linear),
    op("upsample_nearest", "Tensor input, int dim, SymInt size", &[], "F.interpolate(x, size=(5, 13))", ("shape::rules::resized", Lowering::View, "graph::nearest_source"), upsample_nearest),
    op("cat", "Tensor[] tensors, int dim=0", &["torch.cat"], "torch.cat([x, x * 2], dim=1)", ("shape::rules::cat", Lowering::Copy, "graph::eval::cat"), cat),
];

// ---- schemas ---------------------------------------------------------------------------------

/// The type of a schema argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgType {
    Tensor,
    OptionalTensor,
    Tensors,
    OptionalTensors,
    TensorOrScalar,
    Int,
    Ints,
    Dims,
    SymInt,
    SymInts,
    Float,
    OptionalFloat,
    Bool,
    Str,
    Indices,
}

/// The schema types by their spelling.
const ARG_TYPES: &[(&str, ArgType)] = &[
    ("Tensor", ArgType::Tensor),
    ("Tensor?", ArgType::OptionalTensor),
    ("Tensor[]", ArgType::Tensors),
    ("Tensor?[]", ArgType::OptionalTensors),
    ("Tensor|Scalar", ArgType::TensorOrScalar),
    ("int", ArgType::Int),
    ("int[]", ArgType::Ints),
    ("int[]?", ArgType::Dims),
    ("SymInt", ArgType::SymInt),
    ("SymInt[]", ArgType::SymInts),
    ("float", ArgType::Float),
    ("float?", ArgType::OptionalFloat),
    ("bool", ArgType::Bool),
    ("str", ArgType::Str),
    ("Index[]", ArgType::Indices),
];

/// One argument of a schema: `int[]? dim=None`.
#[derive(Clone, Debug)]
struct Param {
    ty: ArgType,
    name: &'static str,
    default: Option<&'static str>,
}

/// Why a schema does not parse (a test checks that every entry's does).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the schema of '{op}' does not parse at '{argument}'")]
pub struct SchemaError {
    /// The op.
    pub op: &'static str,
    /// The argument that does not parse.
    pub argument: &'static str,
}

fn parse_schema(entry: &OpEntry) -> Result<Vec<Param>, SchemaError> {
    let error = |argument| SchemaError {
        op: entry.name,
        argument,
    };
    entry
        .schema
        .split(", ")
        .filter(|argument| !argument.is_empty())
        .map(|argument| {
            let (declared, default) = match argument.split_once('=') {
                Some((declared, default)) => (declared, Some(default)),
                None => (argument, None),
            };
            let (ty, name) = declared.split_once(' ').ok_or(error(argument))?;
            let ty = ARG_TYPES
                .iter()
                .find(|(spelling, _)| *spelling == ty)
                .map(|&(_, ty)| ty)
                .ok_or(error(argument))?;
            if let Some(default) = default
                && default_value(default).is_none()
            {
                return Err(error(argument));
            }
            Ok(Param { ty, name, default })
        })
        .collect()
}

/// Every entry's parsed schema, or the first that does not parse.
pub fn check_schemas() -> Result<(), SchemaError> {
    OPS.iter()
        .try_for_each(|entry| parse_schema(entry).map(drop))
}

/// A default as written in a schema.
#[derive(Clone, Copy, Debug, PartialEq)]
enum DefaultValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
}

fn default_value(text: &str) -> Option<DefaultValue> {
    match text {
        "None" => Some(DefaultValue::None),
        "False" => Some(DefaultValue::Bool(false)),
        "True" => Some(DefaultValue::Bool(true)),
        _ => text
            .parse::<i64>()
            .map(DefaultValue::Int)
            .ok()
            .or_else(|| text.parse::<f64>().ok().map(DefaultValue::Float)),
    }
}

/// The parsed schemas and a name → entry index.
struct Table {
    schemas: Vec<Vec<Param>>,
    by_name: HashMap<&'static str, usize>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| Table {
    // An entry whose schema does not parse takes no arguments: `check_schemas` fails its
    // test, and a call then reports its arguments as extra rather than panicking.
    schemas: OPS
        .iter()
        .map(|entry| parse_schema(entry).unwrap_or_default())
        .collect(),
    by_name: OPS
        .iter()
        .enumerate()
        .map(|(i, entry)| (entry.name, i))
        .collect(),
});

// ---- binding a call ----------------------------------------------------------------------

/// A call's arguments bound to its entry's schema: one value per parameter, the default's
/// where the caller gave none.
pub(super) struct Bound<'a> {
    entry: &'static OpEntry,
    params: &'a [Param],
    values: Vec<PyObjectRef>,
}

/// `_tailor.op(name, *args, **kwargs)`: binds the arguments and builds the op.
pub(super) fn call_op(call: &Call<'_>, mut args: FuncArgs) -> Built {
    if args.args.is_empty() {
        return Err(call.type_error("_tailor.op needs the op's name"));
    }
    let name = args.args.remove(0);
    let name = name
        .downcast_ref::<rustpython_vm::builtins::PyStr>()
        .and_then(|name| name.to_str().map(str::to_owned))
        .ok_or_else(|| call.type_error("_tailor.op needs the op's name"))?;
    let table = &*TABLE;
    let Some(&index) = table.by_name.get(name.as_str()) else {
        return Err(call.unsupported(format!("the op '{name}'"), "it is not in the op table"));
    };
    let entry = &OPS[index];
    let bound = bind(call, entry, &table.schemas[index], args)?;
    (entry.build)(call, &bound)
}

fn bind<'a>(
    call: &Call<'_>,
    entry: &'static OpEntry,
    params: &'a [Param],
    args: FuncArgs,
) -> Result<Bound<'a>, Raise> {
    let name = entry.name;
    if args.args.len() > params.len() {
        return Err(call.type_error(format!(
            "{name}() takes {} positional arguments but {} were given",
            params.len(),
            args.args.len()
        )));
    }
    let mut values: Vec<Option<PyObjectRef>> = args.args.into_iter().map(Some).collect();
    values.resize(params.len(), None);
    for (keyword, value) in args.kwargs {
        let keyword = keyword.to_string();
        let Some(at) = params.iter().position(|p| p.name == keyword) else {
            return Err(call.type_error(format!(
                "{name}() got an unexpected keyword argument '{keyword}'"
            )));
        };
        if values[at].is_some() {
            return Err(call.type_error(format!(
                "{name}() got multiple values for argument '{keyword}'"
            )));
        }
        values[at] = Some(value);
    }
    let vm = call.vm();
    let values = params
        .iter()
        .zip(values)
        .map(
            |(param, value)| match (value, param.default.and_then(default_value)) {
                (Some(value), _) => Ok(value),
                (None, Some(DefaultValue::None)) => Ok(vm.ctx.none()),
                (None, Some(DefaultValue::Bool(b))) => Ok(vm.ctx.new_bool(b).into()),
                (None, Some(DefaultValue::Int(i))) => Ok(vm.ctx.new_int(i).into()),
                (None, Some(DefaultValue::Float(f))) => Ok(vm.ctx.new_float(f).into()),
                (None, None) => Err(call.type_error(format!(
                    "{name}() missing required argument '{}'",
                    param.name
                ))),
            },
        )
        .collect::<Result<Vec<_>, Raise>>()?;
    Ok(Bound {
        entry,
        params,
        values,
    })
}

impl Bound<'_> {
    /// The value of parameter `name` and its type (a name the schema lacks is a bug of the
    /// entry's `build`, reported as a type error naming it rather than a panic).
    fn get(&self, call: &Call<'_>, name: &str, ty: ArgType) -> Result<&PyObjectRef, Raise> {
        self.params
            .iter()
            .zip(&self.values)
            .find(|(param, _)| param.name == name && param.ty == ty)
            .map(|(_, value)| value)
            .ok_or_else(|| {
                call.type_error(format!(
                    "{}() has no argument '{name}' of type {ty:?}",
                    self.entry.name
                ))
            })
    }

    fn tensor(&self, call: &Call<'_>, name: &str) -> Result<TensorRef, Raise> {
        call.tensor(self.get(call, name, ArgType::Tensor)?)
    }

    fn optional_tensor(&self, call: &Call<'_>, name: &str) -> Result<Option<TensorRef>, Raise> {
        call.optional_tensor(self.get(call, name, ArgType::OptionalTensor)?)
    }

    fn list(&self, call: &Call<'_>, name: &str, ty: ArgType) -> Result<Vec<PyObjectRef>, Raise> {
        let value = self.get(call, name, ty)?;
        call.vm().extract_elements_with(value, Ok).map_err(|_| {
            call.type_error(format!(
                "{}(): argument '{name}' must be a list or tuple, not {}",
                self.entry.name,
                call.type_name(value)
            ))
        })
    }

    fn tensors(&self, call: &Call<'_>, name: &str) -> Result<Vec<TensorRef>, Raise> {
        self.list(call, name, ArgType::Tensors)?
            .iter()
            .map(|value| call.tensor(value))
            .collect()
    }

    fn optional_tensors(
        &self,
        call: &Call<'_>,
        name: &str,
    ) -> Result<Vec<Option<TensorRef>>, Raise> {
        self.list(call, name, ArgType::OptionalTensors)?
            .iter()
            .map(|value| call.optional_tensor(value))
            .collect()
    }

    fn tensor_or_scalar(&self, call: &Call<'_>, name: &str) -> Result<&PyObjectRef, Raise> {
        self.get(call, name, ArgType::TensorOrScalar)
    }

    fn int(&self, call: &Call<'_>, name: &str) -> Result<i64, Raise> {
        call.int(self.get(call, name, ArgType::Int)?, name)
    }

    fn ints(&self, call: &Call<'_>, name: &str) -> Result<Vec<i64>, Raise> {
        call.ints(&self.list(call, name, ArgType::Ints)?, name)
    }

    /// An `int[]?`: None (every dim), one int, or a list of them.
    fn dims(&self, call: &Call<'_>, name: &str) -> Result<Option<Vec<i64>>, Raise> {
        let value = self.get(call, name, ArgType::Dims)?;
        if value
            .downcast_ref::<rustpython_vm::builtins::PyInt>()
            .is_some()
        {
            return call.int(value, name).map(|dim| Some(vec![dim]));
        }
        call.dims(value)
    }

    fn sym_int(&self, call: &Call<'_>, name: &str) -> Result<Expr, Raise> {
        let value = self.get(call, name, ArgType::SymInt)?;
        call.size_expr(value).ok_or_else(|| {
            call.type_error(format!(
                "{}(): argument '{name}' must be an int or a size, not {}",
                self.entry.name,
                call.type_name(value)
            ))
        })
    }

    fn sym_ints(&self, call: &Call<'_>, name: &str) -> Result<Vec<Option<Expr>>, Raise> {
        call.sizes(&self.list(call, name, ArgType::SymInts)?)
    }

    fn float(&self, call: &Call<'_>, name: &str) -> Result<f64, Raise> {
        let value = self.get(call, name, ArgType::Float)?;
        if let Some(float) = value.downcast_ref::<PyFloat>() {
            return Ok(float.to_f64());
        }
        call.int(value, name).map(|int| int as f64)
    }

    fn optional_float(&self, call: &Call<'_>, name: &str) -> Result<Option<f64>, Raise> {
        let value = self.get(call, name, ArgType::OptionalFloat)?;
        if call.vm().is_none(value) {
            return Ok(None);
        }
        if let Some(float) = value.downcast_ref::<PyFloat>() {
            return Ok(Some(float.to_f64()));
        }
        call.int(value, name).map(|int| Some(int as f64))
    }

    fn bool(&self, call: &Call<'_>, name: &str) -> Result<bool, Raise> {
        let value = self.get(call, name, ArgType::Bool)?;
        Ok(value.clone().is_true(call.vm())?)
    }

    fn str(&self, call: &Call<'_>, name: &str) -> Result<String, Raise> {
        let value = self.get(call, name, ArgType::Str)?;
        value
            .downcast_ref::<rustpython_vm::builtins::PyStr>()
            .and_then(|text| text.to_str().map(str::to_owned))
            .ok_or_else(|| {
                call.type_error(format!(
                    "{}(): argument '{name}' must be str, not {}",
                    self.entry.name,
                    call.type_name(value)
                ))
            })
    }

    fn indices(&self, call: &Call<'_>, name: &str) -> Result<Vec<PyObjectRef>, Raise> {
        self.list(call, name, ArgType::Indices)
    }
}

// ---- the builds ------------------------------------------------------------------------------

fn unary(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let Some(op) = UnaryOp::named(args.entry.name) else {
        return Err(call.unsupported(format!("torch.{}", args.entry.name), ""));
    };
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.unary(op, x, span))
}

/// `a op b` where at least one side is a tensor, the other a tensor or a Python number.
fn binary(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let name = args.entry.name;
    // The second operand is `other`, or `exponent` for `pow`, as PyTorch names them.
    let second = args.params.get(1).map_or("other", |param| param.name);
    let (lhs, rhs) = (
        args.tensor_or_scalar(call, "input")?,
        args.tensor_or_scalar(call, second)?,
    );
    let Some(op) = BinaryOp::named(name) else {
        return Err(call.unsupported(format!("the operator '{name}' on tensors"), ""));
    };
    if !call.is_capturing()
        && let Some(scaled) = call.outside_forward(name, lhs, rhs)?
    {
        return Ok(scaled);
    }
    if op == BinaryOp::Pow
        && call.is_tensor(lhs)
        && !call.is_tensor(rhs)
        && let Some(exponent) = call.scalar(rhs)
    {
        let x = call.tensor(lhs)?;
        return call.tensor_op(|ops, span| ops.pow(x, exponent, span));
    }
    let vm = call.vm();
    match (call.is_tensor(lhs), call.is_tensor(rhs)) {
        (true, true) => {
            let (a, b) = (call.tensor(lhs)?, call.tensor(rhs)?);
            call.tensor_op(|ops, span| ops.binary(op, a, b, span))
        }
        (false, false) => Err(call.type_error(format!(
            "{name}(): expected a Tensor operand, got {} and {}",
            call.type_name(lhs),
            call.type_name(rhs)
        ))),
        (tensor_on_left, _) => {
            let (tensor, other) = if tensor_on_left {
                (lhs, rhs)
            } else {
                (rhs, lhs)
            };
            if other.class().is(vm.ctx.types.bool_type) && call.proxy_dtype(tensor)? == DType::Bool
            {
                // A Python bool beside a bool tensor is a bool operand, as in PyTorch:
                // `mask | True` stays bool, `mask - True` is refused.
                let (a, b) = (call.tensor_or_number(lhs)?, call.tensor_or_number(rhs)?);
                return call.tensor_op(|ops, span| ops.binary(op, a, b, span));
            }
            let scalar = call.scalar(other).ok_or_else(|| {
                call.type_error(format!(
                    "unsupported operand: Tensor and {}",
                    call.type_name(other)
                ))
            })?;
            let tensor = call.tensor(tensor)?;
            let float = other.downcast_ref::<PyFloat>().is_some();
            call.tensor_op(|ops, span| {
                let out = ops.scalar(op, tensor, scalar, tensor_on_left, span)?;
                // A Python float makes an integer result float32 (`ids * 0.5`).
                let dtype = ops.dtype_of(&out);
                if float && dtype != DType::Bool {
                    ops.retype(&out, dtype.with_scalar(true));
                }
                Ok(out)
            })
        }
    }
}

fn matmul(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let (a, b) = (args.tensor(call, "input")?, args.tensor(call, "other")?);
    call.tensor_op(|ops, span| ops.matmul(a, b, span))
}

fn where_(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let cond = args.tensor(call, "condition")?;
    let a = call.tensor_or_number(args.tensor_or_scalar(call, "input")?)?;
    let b = call.tensor_or_number(args.tensor_or_scalar(call, "other")?)?;
    call.tensor_op(|ops, span| ops.where_(cond, a, b, span))
}

/// `tril`, or `triu` when `upper`.
fn triangle(call: &Call<'_>, args: &Bound<'_>, upper: bool) -> Built {
    let x = args.tensor(call, "input")?;
    let diagonal = args.int(call, "diagonal")?;
    call.tensor_op(|ops, span| ops.triangle(upper, x, diagonal, span))
}

/// `torch.arange(start, end, step)` with int bounds, `end` possibly a size of the capture:
/// a constant when its length is known, else a node.
fn arange(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let start = args.int(call, "start")?;
    let step = args.int(call, "step")?;
    if step <= 0 {
        return Err(call.unsupported(
            format!("torch.arange with step {step}"),
            "only positive int steps are in the subset",
        ));
    }
    let end = args.sym_int(call, "end")?;
    let len =
        call.replace(&((end - Expr::int(start)) + Expr::int(step - 1)).floor_div(&Expr::int(step)));
    let init = Init::Arange {
        start: start as f64,
        step: step as f64,
    };
    match len.as_int() {
        Some(n) => call.new_constant(vec![n.max(0)], init, false, DType::Float32),
        None => call.tensor_op(|ops, span| ops.arange(start as f64, step as f64, len, span)),
    }
}

/// `t.to(dtype)`: `t` itself when it has that dtype; for module state or a constant, a
/// constant of that dtype holding the cast values; else a `Cast` op.
fn to(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let name = args.str(call, "dtype")?;
    let to = DType::parse(&name).ok_or_else(|| {
        call.unsupported(
            format!("the dtype torch.{name}"),
            "Tailor's tensors are float32, int64, int32 or bool",
        )
    })?;
    let tensor = args.get(call, "input", ArgType::Tensor)?;
    let x = call.tensor(tensor)?;
    let from = call.dtype_of(&x);
    if from == to {
        return Ok(tensor.clone());
    }
    match x {
        TensorRef::Const(c) => {
            let step = crate::graph::dtype::cast_step(from, to);
            let init = match &*c.init.borrow() {
                Init::Fill(v) => Init::Fill(f64::from(step.apply(*v as f32))),
                // Whole-number ranges (`arange(n)` made int64) keep their form.
                Init::Arange { start, step: by }
                    if to == DType::Int64 && start.fract() == 0.0 && by.fract() == 0.0 =>
                {
                    Init::Arange {
                        start: *start,
                        step: *by,
                    }
                }
                _ => {
                    let values = c.observed().data;
                    Init::Data(values.into_iter().map(|v| step.apply(v)).collect())
                }
            };
            call.new_constant(c.shape.clone(), init, c.is_param, to)
        }
        x => call.tensor_op(|ops, span| ops.cast(to, x, span)),
    }
}

fn embedding(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let (x, weight) = (args.tensor(call, "input")?, args.tensor(call, "weight")?);
    call.tensor_op(|ops, span| ops.embedding(x, weight, span))
}

/// Eval-mode batch norm; `state` is the running mean, running var, weight and bias.
fn batch_norm(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let mut inputs = vec![args.tensor(call, "input")?];
    inputs.extend(args.optional_tensors(call, "state")?.into_iter().flatten());
    let features = args.int(call, "features")?;
    let eps = args.float(call, "eps")?;
    call.tensor_op(|ops, span| ops.batch_norm(&inputs, features, eps, span))
}

fn reduce(call: &Call<'_>, args: &Bound<'_>, kind: ReduceKind) -> Built {
    let what = args.entry.name;
    let x = args.tensor(call, "input")?;
    let dims = args.dims(call, "dim")?;
    let keepdim = args.bool(call, "keepdim")?;
    call.tensor_op(|ops, span| ops.reduce(kind, what, x, dims, keepdim, span))
}

/// `softmax`, or `log_softmax` when `log`.
fn softmax(call: &Call<'_>, args: &Bound<'_>, log: bool) -> Built {
    let x = args.tensor(call, "input")?;
    let dims = args.dims(call, "dim")?;
    call.tensor_op(|ops, span| ops.softmax(log, x, dims, span))
}

/// One node, as Dynamo's graph keeps it (lowering decomposes it).
fn attention(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let mut inputs = vec![
        args.tensor(call, "query")?,
        args.tensor(call, "key")?,
        args.tensor(call, "value")?,
    ];
    let causal = args.bool(call, "is_causal")?;
    let mask = match args.optional_tensor(call, "attn_mask")? {
        Some(_) if causal => {
            return Err(call.type_error(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
            ));
        }
        Some(mask) => {
            let kind = if call.dtype_of(&mask) == DType::Bool {
                AttentionMask::Keep
            } else {
                AttentionMask::Add
            };
            inputs.push(mask);
            kind
        }
        None => AttentionMask::None,
    };
    let scale = args.optional_float(call, "scale")?;
    call.tensor_op(|ops, span| ops.attention(&inputs, causal, scale, mask, span))
}

fn layer_norm(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let x = args.tensor(call, "input")?;
    let normalized = args
        .sym_ints(call, "normalized_shape")?
        .into_iter()
        .collect::<Option<Vec<Expr>>>()
        .ok_or_else(|| call.type_error("normalized_shape must be an int or a tuple of sizes"))?;
    let inputs = match (
        args.optional_tensor(call, "weight")?,
        args.optional_tensor(call, "bias")?,
    ) {
        (Some(w), Some(b)) => vec![x, w, b],
        (None, None) => vec![x],
        _ => {
            return Err(call.unsupported(
                "layer_norm with only one of weight and bias",
                "pass both or neither",
            ));
        }
    };
    let eps = args.float(call, "eps")?;
    call.tensor_op(|ops, span| ops.layer_norm(&inputs, normalized, eps, span))
}

fn linear(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let (x, weight) = (args.tensor(call, "input")?, args.tensor(call, "weight")?);
    let bias = args.optional_tensor(call, "bias")?;
    call.tensor_op(|ops, span| ops.linear(x, weight, bias, true, span))
}

/// The convolution's operands (x, weight, the bias if any) and window.
fn conv_operands(call: &Call<'_>, args: &Bound<'_>) -> Result<(Vec<TensorRef>, ConvWindow), Raise> {
    let mut inputs = vec![args.tensor(call, "input")?, args.tensor(call, "weight")?];
    inputs.extend(args.optional_tensor(call, "bias")?);
    let window = ConvWindow {
        stride: args.ints(call, "stride")?,
        padding: args.ints(call, "padding")?,
        dilation: args.ints(call, "dilation")?,
        groups: args.int(call, "groups")?,
    };
    Ok((inputs, window))
}

fn conv(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let (inputs, window) = conv_operands(call, args)?;
    call.tensor_op(|ops, span| ops.conv(&inputs, window, span))
}

fn conv_transpose(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let (inputs, window) = conv_operands(call, args)?;
    let output_padding = args.ints(call, "output_padding")?;
    call.tensor_op(|ops, span| ops.conv_transpose(&inputs, window, output_padding, span))
}

fn pool(call: &Call<'_>, args: &Bound<'_>, kind: PoolKind) -> Built {
    let x = args.tensor(call, "input")?;
    let kernel = args.ints(call, "kernel_size")?;
    let stride = args.ints(call, "stride")?;
    let padding = args.ints(call, "padding")?;
    call.tensor_op(|ops, span| ops.pool(kind, x, kernel, stride, padding, span))
}

/// `x.reshape(shape)`, or `x.view(shape)`: `reshape` that raises where it would copy.
fn reshape(call: &Call<'_>, args: &Bound<'_>, kind: ReshapeKind) -> Built {
    let target = args.sym_ints(call, "shape")?;
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.reshape(x, target, kind, span))
}

/// `x.contiguous()`: `x`, or a contiguous copy of a view whose memory is not.
fn contiguous(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.contiguous(x, span))
}

fn flatten(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let (start, end) = (args.int(call, "start_dim")?, args.int(call, "end_dim")?);
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.flatten(x, start, end, span))
}

fn unsqueeze(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let dim = args.int(call, "dim")?;
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.unsqueeze(x, dim, span))
}

fn squeeze(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let dim = args.int(call, "dim")?;
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.squeeze(x, dim, span))
}

fn expand(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let target = args.sym_ints(call, "size")?;
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.expand(x, target, span))
}

fn transpose(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let (a, b) = (args.int(call, "dim0")?, args.int(call, "dim1")?);
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.transpose(x, a, b, span))
}

fn t(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.t(x, span))
}

/// `x.T` (every dim reversed) or, with `matrix`, `x.mT` (the last two swapped).
fn transposed(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let matrix = args.bool(call, "matrix")?;
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.transposed(x, matrix, span))
}

fn permute(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let dims = args.ints(call, "dims")?;
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.permute_dims(x, &dims, span))
}

fn index(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let x = args.tensor(call, "input")?;
    let items = args
        .indices(call, "indices")?
        .iter()
        .map(|item| call.index_item(item))
        .collect();
    call.tensor_op(|ops, span| ops.index(x, items, span))
}

/// `F.pad(x, [before, after], value=value)` along `dim` in constant mode; the pads are ints
/// or sizes of either sign.
fn constant_pad(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let dim = args.int(call, "dim")?;
    let (before, after) = (args.sym_int(call, "before")?, args.sym_int(call, "after")?);
    let x = args.tensor(call, "input")?;
    let value = args.float(call, "value")?;
    call.tensor_op(|ops, span| ops.constant_pad(x, dim, before, after, value, span))
}

/// `F.interpolate(..., mode='linear')` along `dim` to `size` (an int or a size).
fn upsample_linear(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let dim = args.int(call, "dim")?;
    let size = args.sym_int(call, "size")?;
    let align_corners = args.bool(call, "align_corners")?;
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| {
        let op = |dim| Op::UpsampleLinear { dim, align_corners };
        ops.resize(x, dim, size, op, span)
    })
}

/// `F.interpolate(..., mode='nearest', size=...)` along `dim` to `size` (an int or a size).
fn upsample_nearest(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let dim = args.int(call, "dim")?;
    let size = args.sym_int(call, "size")?;
    let x = args.tensor(call, "input")?;
    call.tensor_op(|ops, span| ops.resize(x, dim, size, |dim| Op::UpsampleNearest { dim }, span))
}

fn cat(call: &Call<'_>, args: &Bound<'_>) -> Built {
    let parts = args.tensors(call, "tensors")?;
    if parts.is_empty() {
        return Err(call.type_error("torch.cat needs at least one tensor"));
    }
    let dim = args.int(call, "dim")?;
    call.tensor_op(|ops, span| ops.cat(parts, dim, span))
}
