//! The PyTorch library as capture sees it: `torch.*`, `torch.nn.*`, `torch.nn.functional.*`,
//! tensor methods and the few Python builtins models use.
//!
//! Input: a dotted path or method name with evaluated arguments. Output: a `Value`; tensor
//! operations append graph nodes through `ops::Ops`, whose shape rules record guards.
//! Invariant: a name that is not listed here is an `Unsupported` error naming it.

use super::FrontendError;
use super::interp::{Args, Interp};
use super::ops::IndexItem;
use super::value::{ModuleKind, ModuleObj, ModuleRef, Value};
use crate::graph::{Init, PoolKind, ReduceKind, Span, UnaryOp};
use crate::shape::rules;
use crate::symbolic::Expr;
use rustpython_parser::ast;
use std::cell::RefCell;
use std::rc::Rc;

type Result<T> = std::result::Result<T, FrontendError>;

/// A constant int argument (sizes of layers, dims, …).
fn int_arg(
    interp: &Interp<'_, '_>,
    args: &Args,
    index: usize,
    name: &str,
    default: Option<i64>,
    span: Span,
) -> Result<i64> {
    match args.get(index, name) {
        Some(Value::Int(v)) => Ok(*v),
        Some(Value::Bool(b)) => Ok(i64::from(*b)),
        Some(Value::Size(e)) => Err(interp.unsupported(
            span,
            format!("a symbolic size ({e}) as '{name}'"),
            "this argument must be a constant",
        )),
        Some(other) => Err(interp.type_error(
            span,
            format!(
                "argument '{name}' must be an int, not {}",
                other.type_name()
            ),
        )),
        None => default
            .ok_or_else(|| interp.type_error(span, format!("missing required argument '{name}'"))),
    }
}

fn float_arg(
    interp: &Interp<'_, '_>,
    args: &Args,
    index: usize,
    name: &str,
    default: f64,
    span: Span,
) -> Result<f64> {
    match args.get(index, name) {
        Some(Value::Int(v)) => Ok(*v as f64),
        Some(Value::Float(v)) => Ok(*v),
        Some(other) => Err(interp.type_error(
            span,
            format!(
                "argument '{name}' must be a number, not {}",
                other.type_name()
            ),
        )),
        None => Ok(default),
    }
}

fn bool_arg(args: &Args, index: usize, name: &str, default: bool) -> bool {
    match args.get(index, name) {
        Some(Value::Bool(b)) => *b,
        Some(Value::Int(i)) => *i != 0,
        _ => default,
    }
}

/// An int or a tuple of `n` ints (`kernel_size=3` or `(3, 3)`).
fn tuple_arg(
    interp: &Interp<'_, '_>,
    args: &Args,
    index: usize,
    name: &str,
    n: usize,
    default: Option<i64>,
    span: Span,
) -> Result<Vec<i64>> {
    match args.get(index, name) {
        Some(Value::Tuple(_) | Value::List(_)) => {
            let items = args
                .get(index, name)
                .and_then(Value::items)
                .unwrap_or_default();
            if items.len() != n {
                return Err(interp.type_error(
                    span,
                    format!("'{name}' needs {n} values, got {}", items.len()),
                ));
            }
            items
                .iter()
                .map(|v| match v {
                    Value::Int(i) => Ok(*i),
                    other => Err(interp.type_error(
                        span,
                        format!("'{name}' must hold ints, not {}", other.type_name()),
                    )),
                })
                .collect()
        }
        _ => Ok(vec![int_arg(interp, args, index, name, default, span)?; n]),
    }
}

fn check_positive(interp: &Interp<'_, '_>, values: &[i64], name: &str, span: Span) -> Result<()> {
    match values.iter().find(|&&v| v <= 0) {
        Some(v) => Err(interp.type_error(span, format!("'{name}' must be positive, got {v}"))),
        None => Ok(()),
    }
}

fn arg(
    interp: &Interp<'_, '_>,
    args: &Args,
    index: usize,
    name: &str,
    span: Span,
) -> Result<Value> {
    args.get(index, name)
        .cloned()
        .ok_or_else(|| interp.type_error(span, format!("missing required argument '{name}'")))
}

/// A size list given as varargs or one tuple: `view(b, -1)`, `view((b, -1))`.
fn sizes_arg(interp: &Interp<'_, '_>, args: &Args, span: Span) -> Result<Vec<Option<Expr>>> {
    let items = match args.positional.as_slice() {
        [single @ (Value::Tuple(_) | Value::List(_))] => single.items().unwrap_or_default(),
        many => many.to_vec(),
    };
    items
        .iter()
        .map(|v| match v {
            Value::Int(-1) => Ok(None),
            Value::Int(i) if *i < -1 => {
                Err(interp.type_error(span, format!("invalid shape dimension {i}")))
            }
            other => other.as_expr().map(Some).ok_or_else(|| {
                interp.type_error(
                    span,
                    format!("a size must be an int, not {}", other.type_name()),
                )
            }),
        })
        .collect()
}

/// Static sizes for a tensor made outside forward (`torch.randn(64, 32)`).
fn static_sizes(interp: &Interp<'_, '_>, args: &Args, span: Span) -> Result<Vec<i64>> {
    let sizes = sizes_arg(interp, args, span)?;
    sizes
        .iter()
        .map(|s| match s.as_ref().and_then(Expr::as_int) {
            Some(v) if v >= 0 => Ok(v),
            Some(v) => Err(interp.type_error(span, format!("negative dimension {v}"))),
            None => Err(interp.unsupported(
                span,
                "creating a tensor whose size is symbolic",
                "derive it from an input with an op instead",
            )),
        })
        .collect()
}

/// Dims argument as written: one int or a tuple of ints; `None` (all dims) when absent.
fn dims_arg(
    interp: &Interp<'_, '_>,
    value: Option<&Value>,
    span: Span,
) -> Result<Option<Vec<i64>>> {
    match value {
        None | Some(Value::None) => Ok(None),
        Some(Value::Int(d)) => Ok(Some(vec![*d])),
        Some(v @ (Value::Tuple(_) | Value::List(_))) => v
            .items()
            .unwrap_or_default()
            .iter()
            .map(|d| match d {
                Value::Int(d) => Ok(*d),
                other => Err(interp.type_error(
                    span,
                    format!("dims must be ints, not {}", other.type_name()),
                )),
            })
            .collect::<Result<_>>()
            .map(Some),
        Some(other) => Err(interp.type_error(
            span,
            format!("dim must be an int, not {}", other.type_name()),
        )),
    }
}

fn new_module(class_name: &str, kind: ModuleKind, attrs: Vec<(String, Value)>) -> Value {
    Value::Module(Rc::new(RefCell::new(ModuleObj {
        class_name: class_name.to_string(),
        kind,
        attrs,
    })))
}

/// Calls a library function by its dotted path.
pub(crate) fn call(
    interp: &mut Interp<'_, '_>,
    path: &str,
    args: Args,
    span: Span,
) -> Result<Value> {
    let short = path
        .strip_prefix("torch.nn.functional.")
        .map(|s| format!("F.{s}"));
    let name = short.as_deref().unwrap_or(path);
    match name {
        "len" => {
            let value = arg(interp, &args, 0, "obj", span)?;
            match &value {
                Value::Tensor(_) | Value::Const(_) => {
                    let shape = interp.shape_of(&value, span)?;
                    shape.first().cloned().map(Value::from_expr).ok_or_else(|| interp.type_error(span, "len() of a 0-d tensor"))
                }
                other => other
                    .items()
                    .map(|items| Value::Int(items.len() as i64))
                    .ok_or_else(|| interp.type_error(span, format!("object of type '{}' has no len()", other.type_name()))),
            }
        }
        "range" => {
            let ints: Vec<i64> = (0..args.positional.len()).map(|i| int_arg(interp, &args, i, "range bound", None, span)).collect::<Result<_>>()?;
            match ints.as_slice() {
                [stop] => Ok(Value::Range(0, *stop, 1)),
                [start, stop] => Ok(Value::Range(*start, *stop, 1)),
                [start, stop, step] if *step != 0 => Ok(Value::Range(*start, *stop, *step)),
                _ => Err(interp.type_error(span, "range() takes 1 to 3 int arguments (step not 0)")),
            }
        }
        "int" => match arg(interp, &args, 0, "x", span)? {
            Value::Float(f) => Ok(Value::Int(f.trunc() as i64)),
            v @ (Value::Int(_) | Value::Size(_)) => Ok(v),
            Value::Bool(b) => Ok(Value::Int(i64::from(b))),
            other => Err(interp.type_error(span, format!("int() of a {}", other.type_name()))),
        },
        "float" => match arg(interp, &args, 0, "x", span)? {
            Value::Int(i) => Ok(Value::Float(i as f64)),
            v @ Value::Float(_) => Ok(v),
            Value::Size(_) => Err(interp.unsupported(span, "float() of a symbolic size", "it would produce a SymFloat")),
            other => Err(interp.type_error(span, format!("float() of a {}", other.type_name()))),
        },
        "bool" => {
            let value = arg(interp, &args, 0, "x", span)?;
            Ok(Value::Bool(interp.truthy(&value, span, "bool()")?))
        }
        "abs" => match arg(interp, &args, 0, "x", span)? {
            Value::Int(i) => Ok(Value::Int(i.abs())),
            Value::Float(f) => Ok(Value::Float(f.abs())),
            other => Err(interp.type_error(span, format!("abs() of a {}", other.type_name()))),
        },
        "round" => match arg(interp, &args, 0, "x", span)? {
            Value::Float(f) => Ok(Value::Int(f.round() as i64)),
            v @ Value::Int(_) => Ok(v),
            other => Err(interp.type_error(span, format!("round() of a {}", other.type_name()))),
        },
        "min" | "max" => {
            let values = match args.positional.as_slice() {
                [single] => single.items().ok_or_else(|| interp.type_error(span, format!("{name}() of a {}", single.type_name())))?,
                many => many.to_vec(),
            };
            let exprs: Option<Vec<Expr>> = values.iter().map(Value::as_expr).collect();
            match exprs {
                Some(exprs) if !exprs.is_empty() => {
                    let folded = exprs[1..].iter().fold(exprs[0].clone(), |acc, e| if name == "min" { Expr::min(&acc, e) } else { Expr::max(&acc, e) });
                    Ok(Value::from_expr(folded))
                }
                _ => {
                    let floats: Option<Vec<f64>> = values
                        .iter()
                        .map(|v| match v {
                            Value::Float(f) => Some(*f),
                            Value::Int(i) => Some(*i as f64),
                            _ => None,
                        })
                        .collect();
                    let floats = floats.filter(|f| !f.is_empty()).ok_or_else(|| interp.type_error(span, format!("{name}() needs numbers")))?;
                    let pick = if name == "min" { floats.iter().copied().fold(f64::INFINITY, f64::min) } else { floats.iter().copied().fold(f64::NEG_INFINITY, f64::max) };
                    Ok(Value::Float(pick))
                }
            }
        }
        "sum" => {
            let values = arg(interp, &args, 0, "iterable", span)?;
            let items = interp.iterate(&values, span)?;
            let mut total = Value::Int(0);
            for item in items {
                total = interp.binary(ast::Operator::Add, total, item, span)?;
            }
            Ok(total)
        }
        "tuple" | "list" => {
            let value = args.positional.first().cloned().unwrap_or(Value::tuple(vec![]));
            let items = interp.iterate(&value, span)?;
            Ok(if name == "tuple" { Value::tuple(items) } else { Value::List(Rc::new(RefCell::new(items))) })
        }
        "enumerate" => {
            let value = arg(interp, &args, 0, "iterable", span)?;
            let items = interp.iterate(&value, span)?;
            Ok(Value::tuple(items.into_iter().enumerate().map(|(i, v)| Value::tuple(vec![Value::Int(i as i64), v])).collect()))
        }
        "zip" => {
            let mut columns = Vec::new();
            for value in &args.positional {
                columns.push(interp.iterate(value, span)?);
            }
            let n = columns.iter().map(Vec::len).min().unwrap_or(0);
            Ok(Value::tuple((0..n).map(|i| Value::tuple(columns.iter().map(|c| c[i].clone()).collect())).collect()))
        }
        "isinstance" => Err(interp.unsupported(span, "isinstance()", "Dynamo specializes on types; write the branch for the type you pass")),
        "print" => Err(interp.unsupported(span, "print()", "printing is a side effect: Dynamo graph-breaks on it")),
        "super" => {
            // Fails outside a method, as Python's zero-argument super() does.
            interp.super_method("__init__", span)?;
            Ok(Value::BoundBuiltin(Box::new(Value::None), "super".to_string()))
        }
        "torch.cuda.is_available" => Ok(Value::Bool(false)),
        "torch.device" => Ok(Value::Str("cpu".into())),
        "torch.manual_seed" => Ok(Value::None),
        "math.sqrt" => Ok(Value::Float(float_arg(interp, &args, 0, "x", 0.0, span)?.sqrt())),
        "math.ceil" | "math.floor" => {
            let x = float_arg(interp, &args, 0, "x", 0.0, span)?;
            Ok(Value::Int(if name == "math.ceil" { x.ceil() } else { x.floor() } as i64))
        }
        "torch.compile" => Err(interp.unsupported(span, "torch.compile inside the model", "Tailor is the compiler: choose dynamic=None/True/False in the controls or on the command line")),
        "torch._dynamo.mark_dynamic" | "torch._dynamo.mark_static" | "torch._dynamo.maybe_mark_dynamic" => {
            Err(interp.unsupported(span, path, "give marks in the controls or with --mark-dynamic/--mark-static"))
        }
        "torch.randn" | "torch.rand" | "torch.zeros" | "torch.ones" | "torch.empty" => {
            let shape = static_sizes(interp, &Args { positional: args.positional, keywords: vec![] }, span)?;
            let init = match name {
                "torch.randn" => Init::Normal { std: 1.0 },
                "torch.rand" => Init::Unit,
                "torch.ones" => Init::Fill(1.0),
                _ => Init::Fill(0.0),
            };
            Ok(interp.new_const(shape, init, false))
        }
        "torch.arange" => {
            let n = int_arg(interp, &args, 0, "end", None, span)?;
            Ok(interp.new_const(vec![n.max(0)], Init::Arange { start: 0.0, step: 1.0 }, false))
        }
        "torch.nn.Parameter" => match arg(interp, &args, 0, "data", span)? {
            Value::Const(c) => Ok(interp.new_const(c.shape.clone(), c.init, true)),
            other => Err(interp.type_error(span, format!("nn.Parameter needs a tensor made outside forward, got {}", other.type_name()))),
        },
        "torch.relu" | "F.relu" => unary_op(interp, UnaryOp::Relu, arg(interp, &args, 0, "input", span)?, span),
        "F.gelu" => unary_op(interp, UnaryOp::Gelu, arg(interp, &args, 0, "input", span)?, span),
        "F.silu" => unary_op(interp, UnaryOp::Silu, arg(interp, &args, 0, "input", span)?, span),
        "torch.sigmoid" | "F.sigmoid" => unary_op(interp, UnaryOp::Sigmoid, arg(interp, &args, 0, "input", span)?, span),
        "torch.tanh" | "F.tanh" => unary_op(interp, UnaryOp::Tanh, arg(interp, &args, 0, "input", span)?, span),
        "torch.exp" => unary_op(interp, UnaryOp::Exp, arg(interp, &args, 0, "input", span)?, span),
        "torch.sqrt" => unary_op(interp, UnaryOp::Sqrt, arg(interp, &args, 0, "input", span)?, span),
        "F.dropout" => arg(interp, &args, 0, "input", span),
        "torch.matmul" => {
            let (a, b) = (arg(interp, &args, 0, "input", span)?, arg(interp, &args, 1, "other", span)?);
            matmul(interp, a, b, span)
        }
        "F.linear" => {
            let x = arg(interp, &args, 0, "input", span)?;
            let weight = arg(interp, &args, 1, "weight", span)?;
            let bias = args.get(2, "bias").cloned().filter(|b| !matches!(b, Value::None));
            let (x, weight) = (interp.tensor_ref(&x, span)?, interp.tensor_ref(&weight, span)?);
            let bias = bias.map(|b| interp.tensor_ref(&b, span)).transpose()?;
            interp.tensor_op(|ops| ops.linear(x, weight, bias, true, span))
        }
        "torch.softmax" | "F.softmax" => {
            let x = arg(interp, &args, 0, "input", span)?;
            let dim = args.get(1, "dim").cloned().ok_or_else(|| interp.type_error(span, "softmax() needs dim"))?;
            softmax(interp, x, &dim, span)
        }
        "F.layer_norm" => {
            let x = arg(interp, &args, 0, "input", span)?;
            // `F.layer_norm(x, (x.shape[-1],))` passes sizes, which may be symbolic.
            let shape_arg = arg(interp, &args, 1, "normalized_shape", span)?;
            let normalized: Vec<Expr> = match &shape_arg {
                Value::Tuple(_) | Value::List(_) => shape_arg.items().unwrap_or_default().iter().map(Value::as_expr).collect::<Option<_>>(),
                single => single.as_expr().map(|e| vec![e]),
            }
            .ok_or_else(|| interp.type_error(span, "normalized_shape must be an int or a tuple of sizes"))?;
            let weight = args.get(2, "weight").cloned().filter(|v| !matches!(v, Value::None));
            let bias = args.get(3, "bias").cloned().filter(|v| !matches!(v, Value::None));
            let eps = float_arg(interp, &args, 4, "eps", 1e-5, span)?;
            let inputs: Vec<Value> = match (weight, bias) {
                (Some(w), Some(b)) => vec![x, w, b],
                (None, None) => vec![x],
                _ => return Err(interp.unsupported(span, "layer_norm with only one of weight and bias", "pass both or neither")),
            };
            let inputs = interp.tensor_refs(&inputs, span)?;
            interp.tensor_op(|ops| ops.layer_norm(&inputs, normalized, eps, span))
        }
        "torch.cat" | "torch.concat" | "torch.concatenate" => {
            let parts = arg(interp, &args, 0, "tensors", span)?.items().ok_or_else(|| interp.type_error(span, "torch.cat needs a list or tuple of tensors"))?;
            if parts.is_empty() {
                return Err(interp.type_error(span, "torch.cat needs at least one tensor"));
            }
            interp.shape_of(&parts[0], span)?;
            let dim = int_arg(interp, &args, 1, "dim", Some(0), span)?;
            let parts = interp.tensor_refs(&parts, span)?;
            interp.tensor_op(|ops| ops.cat(parts, dim, span))
        }
        "torch.sum" | "torch.mean" | "torch.amax" | "torch.flatten" | "torch.transpose" | "torch.permute" | "torch.reshape" => {
            let mut positional = args.positional;
            if positional.is_empty() {
                return Err(interp.type_error(span, format!("{name}() needs a tensor")));
            }
            let receiver = positional.remove(0);
            let method = name.trim_start_matches("torch.");
            call_method(interp, receiver, method, Args { positional, keywords: args.keywords }, span)
        }
        _ => layer_constructor(interp, name, &args, span),
    }
}

fn tuple_or_int(interp: &Interp<'_, '_>, value: &Value, span: Span) -> Result<Vec<i64>> {
    match value {
        Value::Int(i) => Ok(vec![*i]),
        other => {
            other
                .items()
                .ok_or_else(|| interp.type_error(span, "expected an int or a tuple of ints"))?
                .iter()
                .map(|v| match v {
                    Value::Int(i) => Ok(*i),
                    other => Err(interp
                        .type_error(span, format!("expected ints, got {}", other.type_name()))),
                })
                .collect()
        }
    }
}

/// `nn.Linear(64, 128)` and the other layer classes.
fn layer_constructor(
    interp: &mut Interp<'_, '_>,
    name: &str,
    args: &Args,
    span: Span,
) -> Result<Value> {
    let Some(class) = name.strip_prefix("torch.nn.") else {
        return Err(interp.unsupported(
            span,
            format!("'{name}'"),
            "it is not in Tailor's PyTorch subset",
        ));
    };
    let uniform = |fan_in: i64| Init::Uniform {
        bound: 1.0 / (fan_in.max(1) as f64).sqrt(),
    };
    let activation = |op| Ok(new_module(class, ModuleKind::Activation(op), vec![]));
    match class {
        "Linear" => {
            let in_features = int_arg(interp, args, 0, "in_features", None, span)?;
            let out_features = int_arg(interp, args, 1, "out_features", None, span)?;
            check_positive(interp, &[in_features, out_features], "features", span)?;
            let mut attrs = vec![(
                "weight".to_string(),
                interp.new_const(vec![out_features, in_features], uniform(in_features), true),
            )];
            if bool_arg(args, 2, "bias", true) {
                attrs.push((
                    "bias".to_string(),
                    interp.new_const(vec![out_features], uniform(in_features), true),
                ));
            }
            attrs.push(("in_features".into(), Value::Int(in_features)));
            attrs.push(("out_features".into(), Value::Int(out_features)));
            Ok(new_module(
                class,
                ModuleKind::Linear {
                    in_features,
                    out_features,
                },
                attrs,
            ))
        }
        "Conv1d" | "Conv2d" => {
            let n = if class == "Conv1d" { 1 } else { 2 };
            let in_channels = int_arg(interp, args, 0, "in_channels", None, span)?;
            let out_channels = int_arg(interp, args, 1, "out_channels", None, span)?;
            let kernel = tuple_arg(interp, args, 2, "kernel_size", n, None, span)?;
            let stride = tuple_arg(interp, args, 3, "stride", n, Some(1), span)?;
            let padding = tuple_arg(interp, args, 4, "padding", n, Some(0), span)?;
            let dilation = tuple_arg(interp, args, 5, "dilation", n, Some(1), span)?;
            if !matches!(args.get(6, "groups"), None | Some(Value::Int(1))) {
                return Err(interp.unsupported(span, "grouped convolution", "groups must be 1"));
            }
            check_positive(interp, &[in_channels, out_channels], "channels", span)?;
            check_positive(interp, &kernel, "kernel_size", span)?;
            check_positive(interp, &stride, "stride", span)?;
            check_positive(interp, &dilation, "dilation", span)?;
            if padding.iter().any(|&p| p < 0) {
                return Err(interp.type_error(span, "'padding' must be non-negative"));
            }
            let fan_in = in_channels * kernel.iter().product::<i64>();
            let mut weight_shape = vec![out_channels, in_channels];
            weight_shape.extend(&kernel);
            let mut attrs = vec![(
                "weight".to_string(),
                interp.new_const(weight_shape, uniform(fan_in), true),
            )];
            if bool_arg(args, 7, "bias", true) {
                attrs.push((
                    "bias".to_string(),
                    interp.new_const(vec![out_channels], uniform(fan_in), true),
                ));
            }
            Ok(new_module(
                class,
                ModuleKind::Conv {
                    in_channels,
                    out_channels,
                    kernel,
                    stride,
                    padding,
                    dilation,
                },
                attrs,
            ))
        }
        "BatchNorm1d" | "BatchNorm2d" => {
            let features = int_arg(interp, args, 0, "num_features", None, span)?;
            check_positive(interp, &[features], "num_features", span)?;
            let eps = float_arg(interp, args, 1, "eps", 1e-5, span)?;
            let attrs = vec![
                (
                    "weight".to_string(),
                    interp.new_const(vec![features], Init::Fill(1.0), true),
                ),
                (
                    "bias".to_string(),
                    interp.new_const(vec![features], Init::Fill(0.0), true),
                ),
                (
                    "running_mean".to_string(),
                    interp.new_const(vec![features], Init::Fill(0.0), true),
                ),
                (
                    "running_var".to_string(),
                    interp.new_const(vec![features], Init::Fill(1.0), true),
                ),
            ];
            Ok(new_module(
                class,
                ModuleKind::BatchNorm { features, eps },
                attrs,
            ))
        }
        "LayerNorm" => {
            let shape = tuple_or_int(
                interp,
                &arg(interp, args, 0, "normalized_shape", span)?,
                span,
            )?;
            check_positive(interp, &shape, "normalized_shape", span)?;
            let eps = float_arg(interp, args, 1, "eps", 1e-5, span)?;
            let mut attrs = vec![];
            if bool_arg(args, 2, "elementwise_affine", true) {
                attrs.push((
                    "weight".to_string(),
                    interp.new_const(shape.clone(), Init::Fill(1.0), true),
                ));
                attrs.push((
                    "bias".to_string(),
                    interp.new_const(shape.clone(), Init::Fill(0.0), true),
                ));
            }
            Ok(new_module(
                class,
                ModuleKind::LayerNorm { shape, eps },
                attrs,
            ))
        }
        "MaxPool2d" | "AvgPool2d" => {
            let kernel = tuple_arg(interp, args, 0, "kernel_size", 2, None, span)?;
            let stride = match args.get(1, "stride") {
                None | Some(Value::None) => kernel.clone(),
                Some(_) => tuple_arg(interp, args, 1, "stride", 2, None, span)?,
            };
            let padding = tuple_arg(interp, args, 2, "padding", 2, Some(0), span)?;
            check_positive(interp, &kernel, "kernel_size", span)?;
            check_positive(interp, &stride, "stride", span)?;
            if padding
                .iter()
                .zip(&kernel)
                .any(|(&p, &k)| p < 0 || 2 * p > k)
            {
                return Err(
                    interp.type_error(span, "pad should be at most half of effective kernel size")
                );
            }
            let kind = if class == "MaxPool2d" {
                PoolKind::Max
            } else {
                PoolKind::Avg
            };
            Ok(new_module(
                class,
                ModuleKind::Pool {
                    kind,
                    kernel,
                    stride,
                    padding,
                },
                vec![],
            ))
        }
        "ReLU" => activation(UnaryOp::Relu),
        "GELU" => activation(UnaryOp::Gelu),
        "SiLU" => activation(UnaryOp::Silu),
        "Sigmoid" => activation(UnaryOp::Sigmoid),
        "Tanh" => activation(UnaryOp::Tanh),
        "Softmax" => Ok(new_module(
            class,
            ModuleKind::Softmax(int_arg(interp, args, 0, "dim", None, span)?),
            vec![],
        )),
        "Dropout" | "Identity" => Ok(new_module(class, ModuleKind::Identity, vec![])),
        "Flatten" => {
            let start = int_arg(interp, args, 0, "start_dim", Some(1), span)?;
            let end = int_arg(interp, args, 1, "end_dim", Some(-1), span)?;
            Ok(new_module(class, ModuleKind::Flatten(start, end), vec![]))
        }
        "Embedding" => {
            let rows = int_arg(interp, args, 0, "num_embeddings", None, span)?;
            let width = int_arg(interp, args, 1, "embedding_dim", None, span)?;
            check_positive(interp, &[rows, width], "embedding sizes", span)?;
            let attrs = vec![(
                "weight".to_string(),
                interp.new_const(vec![rows, width], Init::Normal { std: 1.0 }, true),
            )];
            Ok(new_module(class, ModuleKind::Embedding, attrs))
        }
        "Sequential" => {
            let mut attrs = Vec::new();
            for (i, child) in args.positional.iter().enumerate() {
                if !matches!(child, Value::Module(_)) {
                    return Err(interp.type_error(
                        span,
                        format!(
                            "nn.Sequential argument {i} is a {}, not a module",
                            child.type_name()
                        ),
                    ));
                }
                attrs.push((i.to_string(), child.clone()));
            }
            Ok(new_module(class, ModuleKind::Sequential, attrs))
        }
        "ModuleList" => {
            let items = match args.positional.first() {
                Some(v) => interp.iterate(v, span)?,
                None => vec![],
            };
            let attrs = items
                .into_iter()
                .enumerate()
                .map(|(i, m)| (i.to_string(), m))
                .collect();
            Ok(new_module(class, ModuleKind::ModuleList, attrs))
        }
        _ => Err(interp.unsupported(
            span,
            format!("nn.{class}"),
            "it is not in Tailor's PyTorch subset",
        )),
    }
}

/// Calls a layer module on its input.
pub(crate) fn apply_layer(
    interp: &mut Interp<'_, '_>,
    module: &ModuleRef,
    args: Vec<Value>,
    span: Span,
) -> Result<Value> {
    let (kind, class_name) = {
        let m = module.borrow();
        (m.kind.clone(), m.class_name.clone())
    };
    let param = |name: &str| module.borrow().get(name).cloned();
    if matches!(kind, ModuleKind::Sequential) {
        let mut value = match args.as_slice() {
            [x] => x.clone(),
            _ => {
                return Err(interp.type_error(
                    span,
                    format!("nn.Sequential takes 1 input, got {}", args.len()),
                ));
            }
        };
        for child in module.borrow().children() {
            let Value::Module(child) = child else {
                unreachable!("Sequential holds modules")
            };
            value = interp.call_module(&child, vec![value], span)?;
        }
        return Ok(value);
    }
    let [x] = args.as_slice() else {
        return Err(interp.type_error(
            span,
            format!("{class_name}.forward() takes 1 input, got {}", args.len()),
        ));
    };
    let x = x.clone();
    match kind {
        ModuleKind::Linear { .. } => {
            let x = interp.tensor_ref(&x, span)?;
            let weight = param("weight").expect("Linear has a weight");
            let weight = interp.tensor_ref(&weight, span)?;
            let bias = param("bias")
                .map(|b| interp.tensor_ref(&b, span))
                .transpose()?;
            interp.tensor_op(|ops| ops.linear(x, weight, bias, false, span))
        }
        ModuleKind::Conv {
            stride,
            padding,
            dilation,
            ..
        } => {
            let inputs: Vec<Value> = [Some(x), param("weight"), param("bias")]
                .into_iter()
                .flatten()
                .collect();
            let inputs = interp.tensor_refs(&inputs, span)?;
            interp.tensor_op(|ops| ops.conv(&inputs, stride, padding, dilation, span))
        }
        ModuleKind::BatchNorm { features, eps } => {
            let inputs: Vec<Value> = [
                Some(x),
                param("running_mean"),
                param("running_var"),
                param("weight"),
                param("bias"),
            ]
            .into_iter()
            .flatten()
            .collect();
            let inputs = interp.tensor_refs(&inputs, span)?;
            interp.tensor_op(|ops| ops.batch_norm(&inputs, features, eps, span))
        }
        ModuleKind::LayerNorm { shape, eps } => {
            let inputs: Vec<Value> = [Some(x), param("weight"), param("bias")]
                .into_iter()
                .flatten()
                .collect();
            let normalized: Vec<Expr> = shape.iter().map(|&n| Expr::int(n)).collect();
            let inputs = interp.tensor_refs(&inputs, span)?;
            interp.tensor_op(|ops| ops.layer_norm(&inputs, normalized, eps, span))
        }
        ModuleKind::Pool {
            kind,
            kernel,
            stride,
            padding,
        } => {
            let x = interp.tensor_ref(&x, span)?;
            interp.tensor_op(|ops| ops.pool(kind, x, kernel, stride, padding, span))
        }
        ModuleKind::Activation(op) => unary_op(interp, op, x, span),
        ModuleKind::Softmax(dim) => softmax(interp, x, &Value::Int(dim), span),
        ModuleKind::Identity => Ok(x),
        ModuleKind::Flatten(start, end) => flatten(interp, x, start, end, span),
        ModuleKind::Embedding => {
            let weight = param("weight").expect("Embedding has a weight");
            let (x, weight) = (
                interp.tensor_ref(&x, span)?,
                interp.tensor_ref(&weight, span)?,
            );
            interp.tensor_op(|ops| ops.embedding(x, weight, span))
        }
        ModuleKind::ModuleList => {
            Err(interp.type_error(span, "nn.ModuleList is not callable; iterate over it"))
        }
        ModuleKind::User(_) | ModuleKind::Sequential => {
            unreachable!("handled by call_module and above")
        }
    }
}

/// An elementwise function of a tensor.
pub(crate) fn unary_op(
    interp: &mut Interp<'_, '_>,
    op: UnaryOp,
    x: Value,
    span: Span,
) -> Result<Value> {
    let x = interp.tensor_ref(&x, span)?;
    interp.tensor_op(|ops| ops.unary(op, x, span))
}

fn softmax(interp: &mut Interp<'_, '_>, x: Value, dim: &Value, span: Span) -> Result<Value> {
    let x = interp.tensor_ref(&x, span)?;
    let dim = dims_arg(interp, Some(dim), span)?;
    interp.tensor_op(|ops| ops.softmax(x, dim, span))
}

fn matmul(interp: &mut Interp<'_, '_>, a: Value, b: Value, span: Span) -> Result<Value> {
    let (a, b) = (interp.tensor_ref(&a, span)?, interp.tensor_ref(&b, span)?);
    interp.tensor_op(|ops| ops.matmul(a, b, span))
}

fn flatten(
    interp: &mut Interp<'_, '_>,
    x: Value,
    start: i64,
    end: i64,
    span: Span,
) -> Result<Value> {
    let x = interp.tensor_ref(&x, span)?;
    interp.tensor_op(|ops| ops.flatten(x, start, end, span))
}

fn reshape(
    interp: &mut Interp<'_, '_>,
    x: Value,
    target: Vec<Option<Expr>>,
    span: Span,
) -> Result<Value> {
    let x = interp.tensor_ref(&x, span)?;
    interp.tensor_op(|ops| ops.reshape(x, target, span))
}

/// Attributes of tensors: `shape`, `T`, `ndim`, and methods as bound builtins.
pub(crate) fn tensor_attr(
    interp: &mut Interp<'_, '_>,
    tensor: Value,
    name: &str,
    span: Span,
) -> Result<Value> {
    match name {
        "shape" => {
            let shape = interp.shape_of(&tensor, span)?;
            Ok(Value::tuple(
                shape.into_iter().map(Value::from_expr).collect(),
            ))
        }
        "ndim" => Ok(Value::Int(interp.shape_of(&tensor, span)?.len() as i64)),
        "T" | "mT" => {
            let x = interp.tensor_ref(&tensor, span)?;
            interp.tensor_op(|ops| ops.transposed(x, name == "mT", span))
        }
        "dtype" => Ok(Value::Builtin("torch.float32".into())),
        "device" => Ok(Value::Str("cpu".into())),
        "size" | "dim" | "numel" | "view" | "reshape" | "flatten" | "transpose" | "permute"
        | "t" | "relu" | "sigmoid" | "tanh" | "exp" | "sqrt" | "softmax" | "sum" | "mean"
        | "amax" | "matmul" | "contiguous" | "to" | "float" | "unsqueeze" | "squeeze" | "cpu"
        | "cuda" | "detach" | "clone" | "add" | "sub" | "mul" | "div" | "neg" => {
            Ok(Value::BoundBuiltin(Box::new(tensor), name.to_string()))
        }
        _ => Err(interp.unsupported(
            span,
            format!("Tensor.{name}"),
            "it is not in Tailor's PyTorch subset",
        )),
    }
}

/// Methods: tensor methods, `list.append`, `ModuleList.append`, module `.to()`/`.eval()`.
pub(crate) fn call_method(
    interp: &mut Interp<'_, '_>,
    receiver: Value,
    name: &str,
    args: Args,
    span: Span,
) -> Result<Value> {
    match (&receiver, name) {
        (Value::List(items), "append") => {
            let item = arg(interp, &args, 0, "object", span)?;
            items.borrow_mut().push(item);
            return Ok(Value::None);
        }
        (Value::Module(module), "append") => {
            let item = arg(interp, &args, 0, "module", span)?;
            let index = module.borrow().children().len();
            module.borrow_mut().attrs.push((index.to_string(), item));
            return Ok(Value::None);
        }
        (Value::Module(_), "to" | "eval" | "cuda" | "cpu" | "float") => return Ok(receiver),
        (Value::Module(module), "forward") => {
            return interp.call_module(module, args.positional, span);
        }
        (Value::Module(_), _) => {
            return Err(interp.unsupported(span, format!("Module.{name}()"), ""));
        }
        (Value::BoundBuiltin(..) | Value::None, "noop") => return Ok(Value::None),
        (Value::Tuple(items), "numel") => {
            let product = items
                .iter()
                .try_fold(Expr::int(1), |acc, v| v.as_expr().map(|e| &acc * &e));
            return product
                .map(Value::from_expr)
                .ok_or_else(|| interp.type_error(span, "numel() of a non-size tuple"));
        }
        _ => {}
    }
    let x = receiver;
    let rank = interp.shape_of(&x, span)?.len();
    match name {
        "size" => {
            let shape = interp.shape_of(&x, span)?;
            match args.get(0, "dim") {
                None => Ok(Value::tuple(
                    shape.into_iter().map(Value::from_expr).collect(),
                )),
                Some(_) => {
                    let d = int_arg(interp, &args, 0, "dim", None, span)?;
                    let d = rules::normalize_dim(
                        &rules::OpCtx {
                            what: "size".into(),
                            span,
                        },
                        d,
                        rank,
                    )?;
                    Ok(Value::from_expr(shape[d].clone()))
                }
            }
        }
        "dim" => Ok(Value::Int(rank as i64)),
        "numel" => {
            let shape = interp.shape_of(&x, span)?;
            Ok(Value::from_expr(rules::numel(&shape)))
        }
        "view" | "reshape" => {
            let target = sizes_arg(interp, &args, span)?;
            reshape(interp, x, target, span)
        }
        "flatten" => {
            let start = int_arg(interp, &args, 0, "start_dim", Some(0), span)?;
            let end = int_arg(interp, &args, 1, "end_dim", Some(-1), span)?;
            flatten(interp, x, start, end, span)
        }
        "unsqueeze" | "squeeze" => {
            let d = int_arg(interp, &args, 0, "dim", None, span)?;
            let x = interp.tensor_ref(&x, span)?;
            if name == "unsqueeze" {
                interp.tensor_op(|ops| ops.unsqueeze(x, d, span))
            } else {
                interp.tensor_op(|ops| ops.squeeze(x, d, span))
            }
        }
        "transpose" => {
            let a = int_arg(interp, &args, 0, "dim0", None, span)?;
            let b = int_arg(interp, &args, 1, "dim1", None, span)?;
            let x = interp.tensor_ref(&x, span)?;
            interp.tensor_op(|ops| ops.transpose(x, a, b, span))
        }
        "t" => {
            let x = interp.tensor_ref(&x, span)?;
            interp.tensor_op(|ops| ops.t(x, span))
        }
        "permute" => {
            let dims: Vec<i64> = sizes_arg(interp, &args, span)?
                .iter()
                .map(|d| d.as_ref().and_then(Expr::as_int).unwrap_or(-1))
                .collect();
            let x = interp.tensor_ref(&x, span)?;
            interp.tensor_op(|ops| ops.permute_dims(x, &dims, span))
        }
        "relu" => unary_op(interp, UnaryOp::Relu, x, span),
        "sigmoid" => unary_op(interp, UnaryOp::Sigmoid, x, span),
        "tanh" => unary_op(interp, UnaryOp::Tanh, x, span),
        "exp" => unary_op(interp, UnaryOp::Exp, x, span),
        "sqrt" => unary_op(interp, UnaryOp::Sqrt, x, span),
        "neg" => unary_op(interp, UnaryOp::Neg, x, span),
        "softmax" => {
            let dim = arg(interp, &args, 0, "dim", span)?;
            softmax(interp, x, &dim, span)
        }
        "sum" | "mean" | "amax" => {
            let kind = match name {
                "sum" => ReduceKind::Sum,
                "mean" => ReduceKind::Mean,
                _ => ReduceKind::Amax,
            };
            let dims = dims_arg(interp, args.get(0, "dim"), span)?;
            let keepdim = bool_arg(&args, 1, "keepdim", false);
            let x = interp.tensor_ref(&x, span)?;
            interp.tensor_op(|ops| ops.reduce(kind, name, x, dims, keepdim, span))
        }
        "matmul" => {
            let other = arg(interp, &args, 0, "other", span)?;
            matmul(interp, x, other, span)
        }
        "add" | "sub" | "mul" | "div" => {
            let other = arg(interp, &args, 0, "other", span)?;
            let op = match name {
                "add" => ast::Operator::Add,
                "sub" => ast::Operator::Sub,
                "mul" => ast::Operator::Mult,
                _ => ast::Operator::Div,
            };
            tensor_binary(interp, op, x, other, span)
        }
        "contiguous" | "to" | "float" | "cpu" | "cuda" | "detach" | "clone" => Ok(x),
        _ => Err(interp.unsupported(
            span,
            format!("Tensor.{name}()"),
            "it is not in Tailor's PyTorch subset",
        )),
    }
}

/// `a op b` where at least one side is a tensor.
pub(crate) fn tensor_binary(
    interp: &mut Interp<'_, '_>,
    op: ast::Operator,
    lhs: Value,
    rhs: Value,
    span: Span,
) -> Result<Value> {
    let is_tensor = |v: &Value| matches!(v, Value::Tensor(_) | Value::Const(_));
    if op == ast::Operator::MatMult {
        return matmul(interp, lhs, rhs, span);
    }
    if !interp.is_capturing() {
        // Outside forward only scaling a random constant is meaningful (`torch.randn(…) * 0.02`).
        if let (Value::Const(c), ast::Operator::Mult, Some(crate::graph::Scalar::Number(k))) =
            (&lhs, op, interp.scalar_of(&rhs))
        {
            let init = match c.init {
                Init::Normal { std } => Some(Init::Normal { std: std * k }),
                Init::Uniform { bound } => Some(Init::Uniform {
                    bound: bound * k.abs(),
                }),
                Init::Fill(v) => Some(Init::Fill(v * k)),
                _ => None,
            };
            if let Some(init) = init {
                return Ok(interp.new_const(c.shape.clone(), init, c.is_param));
            }
        }
        return Err(interp.unsupported(
            span,
            "tensor arithmetic outside forward",
            "create parameters with torch.randn/zeros/ones, optionally scaled by a number",
        ));
    }
    if op == ast::Operator::Pow {
        let exponent = interp.scalar_of(&rhs);
        let x = interp.tensor_ref(&lhs, span);
        return interp.tensor_op(|ops| ops.pow(x, exponent, span));
    }
    let Some(binary) = Interp::elementwise(op) else {
        return Err(interp.unsupported(span, "this operator on tensors", "use + - * / or @"));
    };
    match (is_tensor(&lhs), is_tensor(&rhs)) {
        (true, true) => {
            let (lhs, rhs) = (
                interp.tensor_ref(&lhs, span)?,
                interp.tensor_ref(&rhs, span)?,
            );
            interp.tensor_op(|ops| ops.binary(binary, lhs, rhs, span))
        }
        (tensor_on_left, _) => {
            let (tensor, other) = if tensor_on_left {
                (lhs, rhs)
            } else {
                (rhs, lhs)
            };
            let scalar = interp.scalar_of(&other).ok_or_else(|| {
                interp.type_error(
                    span,
                    format!("unsupported operand: Tensor and {}", other.type_name()),
                )
            })?;
            let tensor = interp.tensor_ref(&tensor, span)?;
            interp.tensor_op(|ops| ops.scalar(binary, tensor, scalar, tensor_on_left, span))
        }
    }
}

/// `x[idx]` with ints, slices, `...` and `None`.
pub(crate) fn index_tensor(
    interp: &mut Interp<'_, '_>,
    tensor: Value,
    index: Value,
    span: Span,
) -> Result<Value> {
    let items = match &index {
        Value::Tuple(items) => items.as_ref().clone(),
        other => vec![other.clone()],
    };
    let tensor = interp.tensor_ref(&tensor, span)?;
    let items = items
        .into_iter()
        .map(|item| index_item(interp, item, span))
        .collect();
    interp.tensor_op(|ops| ops.index(tensor, items, span))
}

/// One subscript item of a tensor index, read as `ops::IndexItem`.
fn index_item(interp: &Interp<'_, '_>, item: Value, span: Span) -> Result<IndexItem> {
    match item {
        Value::Ellipsis => Ok(IndexItem::Ellipsis),
        Value::None => Ok(IndexItem::NewAxis),
        Value::Slice(lower, upper, step) => {
            let step = match *step {
                Value::None => 1,
                Value::Int(s) => s,
                _ => return Err(interp.unsupported(span, "a symbolic slice step", "")),
            };
            let bound = |v: &Value| -> Result<Option<Expr>> {
                match v {
                    Value::None => Ok(None),
                    other => other
                        .as_expr()
                        .map(Some)
                        .ok_or_else(|| interp.type_error(span, "slice indices must be integers")),
                }
            };
            Ok(IndexItem::Slice {
                lower: bound(&lower)?,
                upper: bound(&upper)?,
                step,
            })
        }
        other => other.as_expr().map(IndexItem::Select).ok_or_else(|| {
            interp.unsupported(
                span,
                format!("indexing a tensor with a {}", other.type_name()),
                "advanced indexing is not in the subset",
            )
        }),
    }
}
