//! Conversions between JS values and the compiler's types: options, inputs, errors, tensors.
//!
//! Input: whatever a page passes (plain objects, arrays, strings, `Float32Array`s). Output:
//! `Options`-like Rust values, or a thrown `TailorError` (a JS `Error` with `kind`, `line`
//! and `col`, and for the compiler's errors `messageId` and `messageArgs`, which the page
//! translates) that says which field was wrong. Invariant: nothing here panics on bad input;
//! every malformed value becomes an error the page can show.

use crate::cache::CallEvent;

use crate::config::{CallMarks, CompileConfig, CompilerBackend, DynamicMode, MarkDynamic};
use crate::error::Error;
use crate::frontend::FrontendError;
use crate::graph::{DType, Span, Tensor};
use crate::guard::{ArgValue, CallShapes};
use crate::message::Message;
use crate::spec;
use crate::symbolic::SymbolNaming;
use js_sys::{Array, Float32Array, Object, Reflect};
use serde::Serialize;
use serde_json::Value as Json;
use wasm_bindgen::prelude::*;

// What a call's result gets after its run, each made in one call into JavaScript rather
// than field by field (a call into JavaScript and a key string per field): a steady call's
// whole cost is host work of this size (docs/gpu-runtime.md, "The steady call against the
// naive WGSL").
#[wasm_bindgen(inline_js = r#"
export function tailorTensor(list, shape, data) {
  list ??= [];
  const dims = new Array(shape.length);
  for (let i = 0; i < shape.length; i++) dims[i] = shape[i];
  list.push({ shape: dims, data: data.slice() });
  return list;
}
export function tailorProduct(list, kernel, strategy, building) {
  list.push(Object.freeze({ kernel, strategy, building: building || null }));
}
export function tailorTimes(guard, compile, run, build, host) {
  return { guard, compile, run, build, host };
}
export function tailorRunFields(result, ms, outputs, device, products) {
  if (ms !== undefined) result.ms = ms;
  result.outputs = outputs;
  result.device = device;
  result.products = products;
}
"#)]
extern "C" {
    /// Appends `{ shape, data }` (copies of both) to `list`, a new array when undefined.
    #[wasm_bindgen(js_name = tailorTensor)]
    fn js_tensor(list: &JsValue, shape: &[f64], data: &[f32]) -> JsValue;

    /// Appends a frozen `{ kernel, strategy, building }` (`null` for an empty `building`)
    /// to `list`.
    #[wasm_bindgen(js_name = tailorProduct)]
    pub(super) fn js_product(list: &Array, kernel: &str, strategy: &str, building: &str);

    /// `{ guard, compile, run, build, host }`: what serde makes of a `view::TimingView`.
    #[wasm_bindgen(js_name = tailorTimes)]
    pub(super) fn js_times(guard: f64, compile: f64, run: f64, build: f64, host: f64) -> JsValue;

    /// Sets a result's `ms` (when given), `outputs`, `device` and `products`.
    #[wasm_bindgen(js_name = tailorRunFields)]
    pub(super) fn js_run_fields(
        result: &JsValue,
        ms: Option<&JsValue>,
        outputs: &JsValue,
        device: &str,
        products: &JsValue,
    );
}

/// Serialises a view for JS: maps become plain objects, `None` becomes `null`. A number
/// past 2^53, which a JS number cannot hold exactly (a size of 2^62 typed into the shapes),
/// goes through JSON text and becomes the nearest double, never a panic.
pub(super) fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value.serialize(&serializer).unwrap_or_else(|_| {
        serde_json::to_string(value)
            .ok()
            .and_then(|text| js_sys::JSON::parse(&text).ok())
            .unwrap_or(JsValue::NULL)
    })
}

/// A `TailorError` (as `js_error` makes it) that also carries the message for the page's
/// languages: `messageId` and `messageArgs` (`message` stays the English text).
pub(super) fn js_error_message(
    kind: &str,
    english: &str,
    message: &Message,
    span: Option<Span>,
) -> JsValue {
    let error = js_error(kind, english, span);
    set(&error, "messageId", &to_js(&message.id));
    set(&error, "messageArgs", &to_js(&message.args));
    error
}

/// The error of a call that failed to compile (`CallEvent::error`), as a `TailorError`.
pub(super) fn compile_error(event: &CallEvent) -> JsValue {
    let english = event.error.as_deref().unwrap_or("the call did not compile");
    match &event.error_message {
        Some(message) => js_error_message("compile", english, message, event.error_span),
        None => js_error("compile", english, event.error_span),
    }
}

/// A JS `Error` named `TailorError` with a `kind` and, when known, the source `line`/`col`.
pub(super) fn js_error(kind: &str, message: &str, span: Option<Span>) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name("TailorError");
    set(&error, "kind", &JsValue::from_str(kind));
    if let Some(span) = span {
        set(&error, "line", &JsValue::from(span.line));
        set(&error, "col", &JsValue::from(span.col));
    }
    error.into()
}

/// Sets `object[key] = value`; setting a property on a fresh object or error cannot fail. The
/// key is one of the API's own (`'static`), so interning it keeps the cache small.
pub(super) fn set(object: &JsValue, key: &'static str, value: &JsValue) {
    Reflect::set(object, &interned(key), value).expect("target is a plain object");
}

/// A string every call sends (a key, an input's or a kernel's name, a strategy's), as a JS
/// string made once: later calls look it up instead of decoding it again. Only for strings
/// from a small set, which the cache keeps for the page's life.
pub(super) fn interned(text: &str) -> JsValue {
    JsValue::from_str(wasm_bindgen::intern(text))
}

/// The error's `kind`: which stage rejected the input.
pub(super) fn error_kind(error: &Error) -> &'static str {
    match error {
        Error::Frontend(FrontendError::Syntax { .. }) => "syntax",
        Error::Frontend(FrontendError::Unsupported { .. } | FrontendError::Break { .. }) => {
            "unsupported"
        }
        Error::Frontend(FrontendError::Name { .. }) => "name",
        Error::Frontend(FrontendError::Type { .. } | FrontendError::DType { .. }) => "type",
        Error::Frontend(FrontendError::NoEntry { .. } | FrontendError::Empty) => "entry",
        Error::Frontend(FrontendError::Shape(_)) => "shape",
        Error::Frontend(FrontendError::Assertion { .. }) => "assertion",
        Error::Frontend(
            FrontendError::Budget { .. }
            | FrontendError::GraphTooLarge { .. }
            | FrontendError::Deadline { .. }
            | FrontendError::TooLarge { .. },
        ) => "budget",
        Error::Frontend(FrontendError::Eager { .. }) => "eval",
        Error::Frontend(FrontendError::Compiled { .. } | FrontendError::Replay { .. }) => "call",
        Error::Frontend(FrontendError::ProbeTooLarge { .. }) => "budget",
        Error::Input(_) => "input",
        Error::Eval(_) => "eval",
        Error::Compile(_) => "lower",
        Error::Run(_) => "run",
        Error::Weights(_) => "weights",
        Error::Trace(_) => "torchTrace",
        #[cfg(feature = "gpu")]
        Error::Gpu(_) => "gpu",
        Error::Call { .. } => "call",
    }
}

/// A compiler error as a thrown JS value.
pub(super) fn from_error(error: &Error) -> JsValue {
    js_error_message(
        error_kind(error),
        &error.to_string(),
        &error.message(),
        error.span(),
    )
}

/// An error about the options or inputs a page passed.
pub(super) fn bad_argument(message: impl AsRef<str>) -> JsValue {
    js_error("argument", message.as_ref(), None)
}

/// `compile` options: `{ dynamic, markDynamic, markStatic, recompileLimit, symbolNames }`
/// (`memoryBudget` is read first, by `memory_budget_option`, and applies to the process)
/// (`entry` is read first, by `entry_option`, because marks are checked against the entry's
/// inputs).
pub(super) struct CompileOptions {
    /// `torch.compile`'s settings.
    pub config: CompileConfig,
    /// Marks applied to every call's inputs.
    pub marks: CallMarks,
    /// How views name symbols: `'tailor'` (`s0, s1, …`, the default) or `'pytorch'` (`s77`).
    pub symbol_names: SymbolNaming,
}

/// Parses `symbolNames`: `'tailor'` (default, also for `null`) or `'pytorch'`.
fn parse_symbol_names(value: &Json) -> Result<SymbolNaming, JsValue> {
    match value {
        Json::Null => Ok(SymbolNaming::Tailor),
        Json::String(name) => SymbolNaming::parse(name).ok_or_else(|| {
            bad_argument(format!(
                "symbolNames: expected 'tailor' or 'pytorch', got '{name}'"
            ))
        }),
        other => Err(bad_argument(format!(
            "symbolNames: expected 'tailor' or 'pytorch', got {other}"
        ))),
    }
}

fn json_of(value: &JsValue, what: &str) -> Result<Json, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(Json::Null);
    }
    serde_wasm_bindgen::from_value(value.clone())
        .map_err(|err| bad_argument(format!("{what}: {err}")))
}

/// Parses `dynamic`: `'auto'`/`'none'`/`null` (PyTorch's default), `'true'`/`true`,
/// `'false'`/`false`.
fn parse_dynamic(value: &Json) -> Result<DynamicMode, JsValue> {
    match value {
        Json::Null => Ok(DynamicMode::Auto),
        Json::Bool(true) => Ok(DynamicMode::True),
        Json::Bool(false) => Ok(DynamicMode::False),
        Json::String(text) => text.parse().map_err(|err: String| bad_argument(err)),
        other => Err(bad_argument(format!(
            "dynamic: expected 'auto', 'true' or 'false', got {other}"
        ))),
    }
}

fn parse_size(value: &Json, what: &str) -> Result<Option<i64>, JsValue> {
    match value {
        Json::Null => Ok(None),
        Json::String(text) if matches!(text.as_str(), "inf" | "int_oo" | "Infinity") => Ok(None),
        Json::Number(n) => match n.as_i64() {
            Some(v) if v >= 0 => Ok(Some(v)),
            _ => Err(bad_argument(format!(
                "{what}: {n} is not a non-negative integer"
            ))),
        },
        other => Err(bad_argument(format!(
            "{what}: expected a number, got {other}"
        ))),
    }
}

/// One mark: `['x', 0]` or `['x', 0, min, max]` (or `{input, dim, min, max}`).
fn parse_mark(value: &Json, names: &[String], what: &str) -> Result<MarkDynamic, JsValue> {
    let parts: Vec<Json> = match value {
        Json::Array(items) => items.clone(),
        Json::Object(map) => ["input", "dim", "min", "max"]
            .iter()
            .map(|key| map.get(*key).cloned().unwrap_or(Json::Null))
            .collect(),
        other => {
            return Err(bad_argument(format!(
                "{what}: expected ['input', dim, min, max], got {other}"
            )));
        }
    };
    let Some(Json::String(input)) = parts.first() else {
        return Err(bad_argument(format!(
            "{what}: the first item must be an input name"
        )));
    };
    if !names.contains(input) {
        return Err(bad_argument(format!(
            "{what}: unknown input '{input}' (the model's inputs are: {})",
            names.join(", ")
        )));
    }
    let dim = parse_size(parts.get(1).unwrap_or(&Json::Null), what)?
        .ok_or_else(|| bad_argument(format!("{what}: the second item must be a dim")))?;
    let min = parse_size(parts.get(2).unwrap_or(&Json::Null), what)?;
    let max = parse_size(parts.get(3).unwrap_or(&Json::Null), what)?;
    if let (Some(min), Some(max)) = (min, max) {
        if max < min {
            return Err(bad_argument(format!(
                "{what}: max {max} is below min {min}"
            )));
        }
    }
    Ok(MarkDynamic {
        input: input.clone(),
        dim: dim as usize,
        min,
        max,
    })
}

/// Reads the `entry` option alone (needed before the input names are known).
pub(super) fn entry_option(options: &JsValue) -> Result<Option<String>, JsValue> {
    match json_of(options, "options")? {
        Json::Object(map) => match map.get("entry") {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(name)) => Ok(Some(name.clone())),
            Some(other) => Err(bad_argument(format!("entry: expected a name, got {other}"))),
        },
        Json::Null => Ok(None),
        other => Err(bad_argument(format!(
            "options: expected an object, got {other}"
        ))),
    }
}

/// Reads the `memoryBudget` option alone (set before the model loads, since module state is
/// checked against it as it is made): bytes as a number, or text such as `'512MiB'`.
pub(super) fn memory_budget_option(options: &JsValue) -> Result<Option<u64>, JsValue> {
    let json = json_of(options, "options")?;
    let budget = match json.get("memoryBudget") {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Number(n)) => n
            .as_f64()
            .filter(|bytes| *bytes >= 1.0 && bytes.is_finite())
            .map(|bytes| bytes as u64),
        Some(Json::String(text)) => crate::graph::parse_bytes(text),
        Some(_) => None,
    };
    budget.map(Some).ok_or_else(|| {
        bad_argument(format!(
            "memoryBudget: expected a number of bytes or a size such as '512MiB', got {}",
            json.get("memoryBudget").cloned().unwrap_or(Json::Null)
        ))
    })
}

/// Parses `compile`'s options for a function whose inputs are `names`.
pub(super) fn compile_options(
    options: &JsValue,
    names: &[String],
) -> Result<CompileOptions, JsValue> {
    let json = json_of(options, "options")?;
    let get = |key: &str| json.get(key).cloned().unwrap_or(Json::Null);
    let mut config = CompileConfig {
        dynamic: parse_dynamic(&get("dynamic"))?,
        ..CompileConfig::default()
    };
    if let Some(limit) = parse_size(&get("recompileLimit"), "recompileLimit")? {
        config.recompile_limit = limit as usize;
    }
    match get("backend") {
        Json::Null => {}
        Json::String(name) => {
            config.backend = CompilerBackend::named(&name).ok_or_else(|| {
                bad_argument(format!(
                    "backend: unknown back end '{name}' (expected 'inductor', 'aot_eager' or 'eager')"
                ))
            })?;
        }
        other => {
            return Err(bad_argument(format!(
                "backend: expected a name, got {other}"
            )));
        }
    }
    let list = |key: &str| -> Result<Vec<Json>, JsValue> {
        match get(key) {
            Json::Null => Ok(Vec::new()),
            Json::Array(items) => Ok(items),
            other => Err(bad_argument(format!("{key}: expected a list, got {other}"))),
        }
    };
    let mut marks = CallMarks::default();
    for (i, item) in list("markDynamic")?.iter().enumerate() {
        marks
            .dynamic
            .push(parse_mark(item, names, &format!("markDynamic[{i}]"))?);
    }
    for (i, item) in list("markStatic")?.iter().enumerate() {
        let mark = parse_mark(item, names, &format!("markStatic[{i}]"))?;
        marks.fixed.push((mark.input, mark.dim));
    }
    let symbol_names = parse_symbol_names(&get("symbolNames"))?;
    Ok(CompileOptions {
        config,
        marks,
        symbol_names,
    })
}

/// What a call's options say of autograd: `propagated: [['x', 0]]`, the dims an earlier
/// call stamped dynamic on the tensors passed (a call result's `stamps.inputs` or
/// `stamps.outputs`, handed on as a script hands on its tensors), and `grad: false` for a
/// call under `torch.no_grad()` (gradients are on by default, as in PyTorch).
pub(super) fn autograd_options(
    options: &JsValue,
    names: &[String],
) -> Result<(Vec<(String, usize)>, bool), JsValue> {
    let json = json_of(options, "options")?;
    let get = |key: &str| json.get(key).cloned().unwrap_or(Json::Null);
    let items = match get("propagated") {
        Json::Null => Vec::new(),
        Json::Array(items) => items,
        other => {
            return Err(bad_argument(format!(
                "propagated: expected a list, got {other}"
            )));
        }
    };
    let mut propagated = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mark = parse_mark(item, names, &format!("propagated[{i}]"))?;
        propagated.push((mark.input, mark.dim));
    }
    let grad = !matches!(get("grad"), Json::Bool(false));
    Ok((propagated, grad))
}

/// Per input, the values a page passed (`None`: seeded random values).
pub(super) type InputData = Vec<Option<Vec<f32>>>;

/// A call's inputs: a `SHAPES` string (`x=8,64;n=int(3)`) or `{ x: { shape, data? }, n: 3,
/// flag: true }` (an integer number is a Python int, a boolean a bool). Returns the
/// arguments and, per tensor input, the data when given.
pub(super) fn call_inputs(
    inputs: &JsValue,
    names: &[String],
) -> Result<(CallShapes, InputData), JsValue> {
    if let Some(text) = inputs.as_string() {
        let call = spec::parse_shapes(&text, names).map_err(|err| from_error(&err.into()))?;
        return Ok((call, vec![None; names.len()]));
    }
    if !inputs.is_object() {
        return Err(bad_argument(
            "inputs: expected { name: { shape, data } } or a string such as 'x=8,64'",
        ));
    }
    let known = Object::keys(inputs.unchecked_ref::<Object>());
    // An unknown key is reported before a missing input. The keys' names are read only
    // when one can be unknown: when an input is missing, or when there are more keys than
    // inputs (each input found takes one key).
    let no_unknown_key = || {
        for key in known.iter() {
            let key = key.as_string().unwrap_or_default();
            if !names.contains(&key) {
                return Err(bad_argument(format!(
                    "inputs: unknown input '{key}' (the model's inputs are: {})",
                    names.join(", ")
                )));
            }
        }
        Ok(())
    };
    if known.length() as usize != names.len() {
        no_unknown_key()?;
    }
    let mut shapes = Vec::with_capacity(names.len());
    let mut data = Vec::with_capacity(names.len());
    for name in names {
        let tensor = Reflect::get(inputs, &interned(name)).unwrap_or(JsValue::UNDEFINED);
        if tensor.is_undefined() || tensor.is_null() {
            no_unknown_key()?;
            return Err(bad_argument(format!("inputs: missing input '{name}'")));
        }
        if let Some(b) = tensor.as_bool() {
            shapes.push((name.clone(), ArgValue::Bool(b)));
            continue;
        }
        if let Some(number) = tensor.as_f64() {
            // JavaScript has one number type: a whole number is a Python int, any other a
            // float (`{ f: { float: 2 } }` passes a whole float).
            if number.fract() != 0.0 || !number.is_finite() {
                shapes.push((name.clone(), ArgValue::Float(number)));
            } else {
                let int = safe_integer(number).ok_or_else(|| {
                    bad_argument(format!(
                        "inputs.{name}: {number} is not an int JavaScript holds exactly"
                    ))
                })?;
                shapes.push((name.clone(), ArgValue::Int(int)));
            }
            continue;
        }
        if let Some(number) = Reflect::get(&tensor, &interned("float"))
            .ok()
            .and_then(|f| f.as_f64())
        {
            shapes.push((name.clone(), ArgValue::Float(number)));
            continue;
        }
        let shape_value = Reflect::get(&tensor, &interned("shape")).unwrap_or(JsValue::UNDEFINED);
        let shape = integers(&shape_value).ok_or_else(|| {
            bad_argument(format!(
                "inputs.{name}.shape: expected a list of non-negative integers"
            ))
        })?;
        if shape.iter().any(|&d| d < 0) {
            return Err(bad_argument(format!(
                "inputs.{name}.shape: sizes must be non-negative"
            )));
        }
        let values = Reflect::get(&tensor, &interned("data")).unwrap_or(JsValue::UNDEFINED);
        let values = if values.is_undefined() || values.is_null() {
            None
        } else {
            let array = values.dyn_into::<Float32Array>().map_err(|_| {
                bad_argument(format!("inputs.{name}.data: expected a Float32Array"))
            })?;
            let expected = shape.iter().try_fold(1i64, |n, &d| n.checked_mul(d));
            if expected != Some(i64::from(array.length())) {
                return Err(bad_argument(format!(
                    "inputs.{name}.data: {} values for shape {shape:?} (expected {})",
                    array.length(),
                    expected.map_or("more than an i64 counts".into(), |n| n.to_string())
                )));
            }
            Some(array.to_vec())
        };
        shapes.push((name.clone(), ArgValue::Tensor(shape, DType::Float32)));
        data.push(values);
    }
    Ok((CallShapes::with_args(shapes), data))
}

/// An array of safe integers (`Number.isSafeInteger`, what serde took as an i64 here),
/// read element by element: a call's shapes are short, and serde's generic path costs
/// more than they do.
fn integers(value: &JsValue) -> Option<Vec<i64>> {
    let array = value.dyn_ref::<Array>()?;
    array
        .iter()
        .map(|item| safe_integer(item.as_f64()?))
        .collect()
}

/// `number` as an i64 when it is a safe integer (`Number.isSafeInteger`): a whole number
/// below 2^53 in size, which JavaScript holds exactly along with its neighbours. An int
/// argument and a shape's sizes take the same numbers.
fn safe_integer(number: f64) -> Option<i64> {
    (number.fract() == 0.0 && number.abs() < 2f64.powi(53)).then_some(number as i64)
}

/// Tensors as `[{ shape, data: Float32Array }]`.
pub(super) fn tensors_to_js(tensors: &[Tensor]) -> JsValue {
    if tensors.is_empty() {
        return Array::new().into();
    }
    let mut list = JsValue::UNDEFINED;
    for tensor in tensors {
        let shape: Vec<f64> = tensor.shape.iter().map(|&d| d as f64).collect();
        list = js_tensor(&list, &shape, &tensor.data);
    }
    list
}
