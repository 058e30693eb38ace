//! The wasm JS API, run in a headless browser by `wasm-bindgen-test` (wasm32 only):
//! `Tailor.create`, `compile`, `call`, `wrap`, `trace`, the kernel views and runs, the quiz
//! and the errors, seen from Rust as a page sees them from JS. Calls run on WebGPU when the
//! browser offers it and on the CPU backend otherwise; both must match the
//! reference.
//!
//! Run: `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
//! cargo test --target wasm32-unknown-unknown --test web_api` (with `CHROMEDRIVER` set).
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Reflect};
use tailor::web::{Model, Tailor};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &key.into()).expect("an object")
}

fn options(dynamic: &str) -> JsValue {
    let object = js_sys::Object::new();
    Reflect::set(&object, &"dynamic".into(), &dynamic.into()).expect("an object");
    object.into()
}

async fn call(model: &Model, shapes: &str) -> Result<JsValue, JsValue> {
    JsFuture::from(model.call(shapes.into(), JsValue::UNDEFINED)).await
}

async fn actions(model: &Model, batches: &[i64]) -> Vec<String> {
    let mut actions = Vec::new();
    for batch in batches {
        let result = call(model, &format!("x={batch},64"))
            .await
            .expect("the call runs");
        actions.push(get(&result, "action").as_string().expect("an action"));
    }
    actions
}

async fn simplenet(dynamic: &str) -> Model {
    let tailor = Tailor::create(JsValue::UNDEFINED).await.expect("created");
    tailor
        .compile(tailor::SIMPLENET_SOURCE, options(dynamic))
        .expect("SimpleNet compiles")
}

#[wasm_bindgen_test]
async fn demo_sequence_compiles_as_in_pytorch() {
    let sequence = [8, 16, 32, 16, 8, 64, 16, 8];
    let count = |actions: &[String]| actions.iter().filter(|a| *a == "compile").count();
    assert_eq!(
        count(&actions(&simplenet("true").await, &sequence).await),
        1
    );
    assert_eq!(
        count(&actions(&simplenet("false").await, &sequence).await),
        4
    );
    assert_eq!(
        count(&actions(&simplenet("auto").await, &sequence).await),
        2
    );
}

#[wasm_bindgen_test]
async fn call_returns_outputs_of_the_reference() {
    let model = simplenet("auto").await;
    let result = call(&model, "x=8,64").await.expect("the call runs");
    let outputs: Array = get(&result, "outputs").dyn_into().expect("a list");
    let first = outputs.get(0);
    let data: js_sys::Float32Array = get(&first, "data").dyn_into().expect("a Float32Array");
    assert_eq!(data.length(), 8 * 64);
    let ms = get(&result, "ms");
    for phase in ["guard", "compile", "run"] {
        assert!(get(&ms, phase).as_f64().is_some(), "ms.{phase}");
    }
}

#[wasm_bindgen_test]
async fn wrappers_share_one_cache() {
    let dynamic = simplenet("true").await;
    let fixed = dynamic.wrap(options("false")).expect("a second wrapper");
    call(&dynamic, "x=8,64").await.expect("runs");
    let result = call(&fixed, "x=8,64").await.expect("runs");
    assert_eq!(
        get(&result, "action").as_string().as_deref(),
        Some("compile")
    );
    let reasons: Array = get(&result, "reasons").dyn_into().expect("a list");
    let reason = get(&reasons.get(0), "text").as_string().expect("text");
    assert!(reason.contains("BACKEND_MATCH failure"), "{reason}");
    assert_eq!(Array::from(&dynamic.entries()).length(), 2);
}

/// A call through AOTAutograd stamps the saved `x`'s batch dim; handed on to a static
/// wrapper's call of the same tensor, it makes that entry's batch a symbol, so another
/// batch hits it (the material demo's last loop under PyTorch's default back end). Under
/// `grad: false` nothing is saved, and the returned tensor is stamped either way.
#[wasm_bindgen_test]
async fn stamps_of_a_call_make_the_next_compile_dynamic() {
    let dynamic = simplenet("true").await;
    let fixed = dynamic.wrap(options("false")).expect("a second wrapper");
    let result = call(&dynamic, "x=3,64").await.expect("runs");
    let stamps = get(&result, "stamps");
    let inputs = get(&stamps, "inputs");
    assert_eq!(
        js_sys::JSON::stringify(&inputs)
            .ok()
            .and_then(|s| s.as_string())
            .as_deref(),
        Some(r#"[["x",0]]"#)
    );
    assert_eq!(
        js_sys::JSON::stringify(&get(&stamps, "outputs"))
            .ok()
            .and_then(|s| s.as_string())
            .as_deref(),
        Some("[[0]]")
    );
    let handed_on = js_sys::Object::new();
    Reflect::set(&handed_on, &"propagated".into(), &inputs).expect("an object");
    let first = JsFuture::from(fixed.call("x=3,64".into(), handed_on.into()))
        .await
        .expect("runs");
    assert_eq!(
        get(&first, "action").as_string().as_deref(),
        Some("compile")
    );
    let next = call(&fixed, "x=7,64").await.expect("runs");
    assert_eq!(get(&next, "action").as_string().as_deref(), Some("hit"));
    let no_grad = js_sys::Object::new();
    Reflect::set(&no_grad, &"grad".into(), &false.into()).expect("an object");
    let result = JsFuture::from(dynamic.call("x=5,64".into(), no_grad.into()))
        .await
        .expect("runs");
    let stamps = get(&result, "stamps");
    assert_eq!(Array::from(&get(&stamps, "inputs")).length(), 0);
}

#[wasm_bindgen_test]
async fn errors_carry_kind_and_position() {
    let tailor = Tailor::create(JsValue::UNDEFINED).await.expect("created");
    let Err(error) = tailor.compile("def f(x:\n    return x\n", JsValue::UNDEFINED) else {
        panic!("a syntax error must not compile");
    };
    assert_eq!(get(&error, "kind").as_string().as_deref(), Some("syntax"));
    assert_eq!(get(&error, "line").as_f64(), Some(2.0));
    let model = simplenet("auto").await;
    let error = call(&model, "x=8,65").await.expect_err("in_features is 64");
    assert_eq!(get(&error, "kind").as_string().as_deref(), Some("compile"));
    assert_eq!(
        get(&get(&error, "call"), "action").as_string().as_deref(),
        Some("error")
    );
}

#[wasm_bindgen_test]
async fn trace_lists_nodes_events_and_guards() {
    assert_eq!(Array::from(&Tailor::presets()).length(), 7);
    let model = simplenet("true").await;
    let compilation = model.trace("x=8,64".into()).expect("SimpleNet traces");
    let view = compilation.view();
    let nodes: Array = get(&view, "nodes").dyn_into().expect("a list");
    let linear = nodes
        .iter()
        .find(|node| get(node, "op").as_string().as_deref() == Some("linear"))
        .expect("a linear node");
    assert_eq!(get(&get(&linear, "span"), "line").as_f64(), Some(18.0));
    assert!(Array::from(&get(&view, "events")).length() > 0);
    let guards = Array::from(&get(&view, "guards"));
    let sources: Vec<String> = guards
        .iter()
        .map(|g| get(&g, "source").as_string().unwrap_or_default())
        .collect();
    assert!(
        sources.iter().any(|s| s == "2 <= L['x'].size()[0]"),
        "{sources:?}"
    );
    let check = compilation.check_guards("x=16,64".into()).expect("checks");
    assert_eq!(get(&check, "outcome").as_string().as_deref(), Some("hit"));
    let check = compilation.check_guards("x=1,64".into()).expect("checks");
    assert_eq!(
        get(&check, "outcome").as_string().as_deref(),
        Some("recompile")
    );
}

fn string(value: &JsValue, key: &str) -> String {
    get(value, key).as_string().unwrap_or_default()
}

/// `[frame/compile]` of each graph in `graphs`.
fn graph_ids(graphs: &JsValue) -> Vec<String> {
    Array::from(graphs)
        .iter()
        .map(|g| {
            format!(
                "{}/{}",
                get(&g, "frame").as_f64().unwrap_or(-1.0),
                get(&g, "compileId").as_f64().unwrap_or(-1.0)
            )
        })
        .collect()
}

#[wasm_bindgen_test]
async fn graph_breaks_list_every_graph_and_each_frames_call() {
    let tailor = Tailor::create(JsValue::UNDEFINED).await.expect("created");
    let source = include_str!("../models/break_net.py");
    let model = tailor.compile(source, options("auto")).expect("compiles");
    let view = model.trace("x=8,64".into()).expect("traces").view();
    let graphs = get(&view, "graphs");
    assert_eq!(graph_ids(&graphs), ["0/0", "1/0", "2/0"]);
    let graphs = Array::from(&graphs);
    let first = graphs.get(0);
    assert_eq!(string(&first, "function"), "forward");
    assert_eq!(string(&first, "action"), "compile");
    assert!(
        string(&first, "text").contains("relu"),
        "{}",
        string(&first, "text")
    );
    let print = get(&first, "endsAt");
    assert_eq!(get(&print, "line").as_f64(), Some(15.0));
    assert_eq!(get(&print, "col").as_f64(), Some(9.0));
    assert_eq!(string(&print, "kind"), "print");
    assert!(string(&print, "reason").contains("Failed to trace builtin operator"));
    assert_eq!(
        string(&print, "resume"),
        "torch_dynamo_resume_in_forward_at_15"
    );
    assert!(get(&print, "taken").is_null());
    let second = graphs.get(1);
    assert_eq!(string(&second, "printed"), "hidden torch.Size([8, 128])\n");
    let guards: Vec<String> = Array::from(&get(&second, "guards"))
        .iter()
        .filter_map(|g| g.as_string())
        .collect();
    assert!(guards.iter().any(|g| g.contains("L['h']")), "{guards:?}");
    let branch = get(&second, "endsAt");
    assert_eq!(string(&branch, "reason"), "Data-dependent branching");
    assert_eq!(get(&branch, "taken").as_bool(), Some(true));
    assert!(get(&graphs.get(2), "endsAt").is_null());

    call(&model, "x=8,64").await.expect("runs");
    let result = call(&model, "x=16,64").await.expect("runs");
    let breaks = Array::from(&get(&result, "breaks"));
    let frames: Vec<(String, String, f64)> = breaks
        .iter()
        .map(|b| {
            (
                string(&b, "function"),
                string(&b, "action"),
                get(&b, "entry").as_f64().unwrap_or(-1.0),
            )
        })
        .collect();
    assert_eq!(
        frames,
        [
            (
                "torch_dynamo_resume_in_forward_at_15".to_string(),
                "compile".to_string(),
                1.0
            ),
            (
                "torch_dynamo_resume_in_forward_at_16".to_string(),
                "compile".to_string(),
                1.0
            ),
        ]
    );
    let reasons = Array::from(&get(&breaks.get(0), "reasons"));
    assert_eq!(
        string(&reasons.get(0), "text"),
        "tensor 'h' size mismatch at index 0. expected 8, actual 16"
    );
    assert_eq!(
        graph_ids(&model.graphs(1).expect("call 1 exists")),
        ["0/1", "1/1", "2/1"]
    );
    assert!(model.graphs(2).is_err());
}

fn object(pairs: &[(&str, JsValue)]) -> JsValue {
    let object = js_sys::Object::new();
    for (key, value) in pairs {
        Reflect::set(&object, &(*key).into(), value).expect("an object");
    }
    object.into()
}

#[wasm_bindgen_test]
async fn symbol_names_choose_pytorchs_or_tailors() {
    let tailor = Tailor::create(JsValue::UNDEFINED).await.expect("created");
    let named = object(&[
        ("dynamic", "true".into()),
        ("symbolNames", "pytorch".into()),
    ]);
    let model = tailor
        .compile(tailor::SIMPLENET_SOURCE, named)
        .expect("SimpleNet compiles");
    let view = model.trace("x=8,64".into()).expect("traces").view();
    let symbols = Array::from(&get(&view, "symbols"));
    let first = symbols.get(0);
    assert_eq!(get(&first, "sym").as_string().as_deref(), Some("s77"));
    assert_eq!(
        get(&first, "source").as_string().as_deref(),
        Some("L['x'].size()[0]")
    );
    let numbered = simplenet("true")
        .await
        .trace("x=8,64".into())
        .expect("traces");
    let symbols = Array::from(&get(&numbered.view(), "symbols"));
    assert_eq!(
        get(&symbols.get(0), "sym").as_string().as_deref(),
        Some("s0")
    );
    let error = tailor
        .compile(
            tailor::SIMPLENET_SOURCE,
            object(&[("symbolNames", "sympy".into())]),
        )
        .err()
        .expect("an unknown naming is refused");
    assert!(
        get(&error, "message")
            .as_string()
            .is_some_and(|m| m.contains("symbolNames: expected 'tailor' or 'pytorch', got 'sympy'")),
        "{error:?}"
    );
}

/// Calls started together, without waiting, each resolve to their own result, in order;
/// a call still running on the GPU when the model is reset rejects, and the reset cache
/// starts again at call 0. (`call` submits a GPU call's kernels before it returns, and the
/// later calls wait for the device the earlier one holds.)
#[wasm_bindgen_test]
async fn calls_started_together_resolve_in_order_and_a_reset_rejects_a_running_call() {
    let tailor = Tailor::create(JsValue::UNDEFINED).await.expect("created");
    let model = tailor
        .compile(tailor::SIMPLENET_SOURCE, options("true"))
        .expect("SimpleNet compiles");
    let batches = [8, 16, 8, 3];
    let started: Vec<js_sys::Promise> = batches
        .iter()
        .map(|batch| model.call(format!("x={batch},64").into(), JsValue::UNDEFINED))
        .collect();
    for (index, (promise, batch)) in started.into_iter().zip(batches).enumerate() {
        let result = JsFuture::from(promise).await.expect("the call runs");
        assert_eq!(get(&result, "index").as_f64(), Some(index as f64));
        assert_eq!(string(&result, "shapes"), format!("x={batch},64"));
        let outputs = Array::from(&get(&result, "outputs"));
        let data: js_sys::Float32Array = get(&outputs.get(0), "data").dyn_into().expect("data");
        assert_eq!(data.length() as usize, batch * 64, "call {index}");
        assert!(
            get(&get(&result, "ms"), "run")
                .as_f64()
                .is_some_and(|ms| ms >= 0.0)
        );
    }
    let running = model.call("x=8,64".into(), JsValue::UNDEFINED);
    model.reset().expect("reset");
    let ran = JsFuture::from(running).await;
    if tailor.device() == "gpu" {
        let error = ran.expect_err("a call the reset overtook rejects");
        assert!(string(&error, "message").contains("reset"), "{error:?}");
    }
    let after = call(&model, "x=8,64").await.expect("the call runs");
    assert_eq!(get(&after, "index").as_f64(), Some(0.0));
    assert_eq!(string(&after, "action"), "compile");
}

/// The value of a JS expression.
fn js(expression: &str) -> JsValue {
    js_sys::eval(&format!("({expression})")).expect("a JS expression")
}

#[wasm_bindgen_test]
async fn object_inputs_are_read_and_a_bad_one_is_named() {
    let model = simplenet("true").await;
    let input = js("{ x: { shape: [8, 64], data: new Float32Array(512).fill(0.5) } }");
    let mut results = Vec::new();
    for _ in 0..2 {
        let result = JsFuture::from(model.call(input.clone(), JsValue::UNDEFINED)).await;
        results.push(result.expect("the call runs"));
    }
    let data = |result: &JsValue| {
        let outputs = Array::from(&get(result, "outputs"));
        js_sys::Float32Array::from(get(&outputs.get(0), "data")).to_vec()
    };
    assert_eq!(data(&results[0]).len(), 8 * 64);
    assert_eq!(data(&results[0]), data(&results[1]));
    assert_eq!(string(&results[1], "shapes"), "x=8,64");
    // A call's `ms` is the record `events` keeps of it.
    let events = Array::from(&model.events());
    let json = |value: &JsValue| js_sys::JSON::stringify(value).expect("JSON").as_string();
    assert_eq!(
        json(&get(&results[1], "ms")),
        json(&get(&events.get(1), "ms"))
    );
    // Calls that ran the same forms share one frozen list of them.
    let products = get(&results[1], "products");
    assert!(js_sys::Object::is_frozen(
        products.unchecked_ref::<js_sys::Object>()
    ));
    assert!(js_sys::Object::is(&get(&results[0], "products"), &products));
    let not_integers = "inputs.x.shape: expected a list of non-negative integers";
    for (inputs, expected) in [
        (
            "{ y: { shape: [8, 64] } }",
            "inputs: unknown input 'y' (the model's inputs are: x)",
        ),
        ("{ x: { shape: [8, 64] }, y: 1 }", "unknown input 'y'"),
        ("{}", "inputs: missing input 'x'"),
        ("{ x: null }", "inputs: missing input 'x'"),
        ("{ x: 'abc' }", not_integers),
        ("{ x: { shape: [8, 64.5] } }", not_integers),
        ("{ x: { shape: [8, 2 ** 53] } }", not_integers),
        ("{ x: { shape: '8,64' } }", not_integers),
        (
            "{ x: { shape: [8, -64] } }",
            "inputs.x.shape: sizes must be non-negative",
        ),
        (
            "{ x: { shape: [8, 64], data: [1, 2] } }",
            "inputs.x.data: expected a Float32Array",
        ),
        (
            "{ x: { shape: [8, 64], data: new Float32Array(3) } }",
            "inputs.x.data: 3 values for shape [8, 64] (expected 512)",
        ),
        (
            "{ x: 2 ** 53 }",
            "inputs.x: 9007199254740992 is not an int JavaScript holds exactly",
        ),
    ] {
        let called = JsFuture::from(model.call(js(inputs), JsValue::UNDEFINED)).await;
        let error = called.expect_err(inputs);
        assert_eq!(string(&error, "kind"), "argument", "{inputs}");
        let message = string(&error, "message");
        assert!(message.contains(expected), "{inputs}: {message}");
    }
}

fn max_abs_err(result: &JsValue) -> f64 {
    get(result, "maxAbsErr")
        .as_f64()
        .expect("maxAbsErr is a number")
}

#[wasm_bindgen_test]
async fn checked_calls_match_the_reference_on_either_device() {
    for device in ["auto", "cpu"] {
        let tailor = Tailor::create(object(&[("device", device.into())]))
            .await
            .expect("created");
        if device == "cpu" {
            assert_eq!(tailor.device(), "cpu");
        }
        let model = tailor
            .compile(tailor::SIMPLENET_SOURCE, options("true"))
            .expect("SimpleNet compiles");
        for batch in [8, 3, 64] {
            let result = JsFuture::from(model.call(
                format!("x={batch},64").into(),
                object(&[("check", true.into()), ("timing", true.into())]),
            ))
            .await
            .expect("the call runs");
            assert_eq!(get(&result, "device").as_string(), Some(tailor.device()));
            assert!(max_abs_err(&result) < 1e-3, "batch {batch} on {device}");
            // Kernels are timed on the GPU only (the CPU backend's products are its own).
            let timing = get(&result, "timing").as_string();
            if tailor.device() == "gpu" {
                let how = timing.expect("timed");
                assert!(
                    ["timestamps", "submit_to_done"].contains(&how.as_str()),
                    "{how}"
                );
                assert_eq!(Array::from(&get(&result, "kernelMs")).length(), 2);
            } else {
                assert_eq!(timing, None);
            }
        }
    }
}

/// Each product of a result as `kernel strategy` or `kernel strategy (building form)`.
fn products(result: &JsValue) -> Vec<String> {
    Array::from(&get(result, "products"))
        .iter()
        .map(|product| {
            let kernel = string(&product, "kernel");
            let strategy = string(&product, "strategy");
            match get(&product, "building").as_string() {
                Some(form) => format!("{kernel} {strategy} (building {form})"),
                None => format!("{kernel} {strategy}"),
            }
        })
        .collect()
}

/// The page's tiers through the JS API: with `setTiers(true)`, a large call's products run
/// naive and name the form the browser is building; after `waitForBuilds()` the next call
/// runs that form. Both calls match the reference.
#[wasm_bindgen_test]
async fn with_tiers_a_call_names_the_forms_the_browser_is_building() {
    let tailor = Tailor::create(object(&[("device", "auto".into())]))
        .await
        .expect("created");
    if tailor.device() != "gpu" {
        // `scripts/test.sh` (and so CI) builds this test expecting WebGPU, which headless
        // Chromium has on SwiftShader: there a missing device is a failure, not a skip.
        assert!(
            option_env!("TAILOR_REQUIRE_GPU").is_none_or(|v| v == "0"),
            "no WebGPU, and TAILOR_REQUIRE_GPU asks for it"
        );
        console_log!("no WebGPU here: tiers are a GPU matter; skipped");
        return;
    }
    let was = JsFuture::from(tailor.set_tiers(true)).await.expect("set");
    assert!(was.as_bool().is_some(), "resolves to whether tiers were on");
    let model = tailor
        .compile(tailor::SIMPLENET_SOURCE, options("true"))
        .expect("SimpleNet compiles");
    let checked = || object(&[("check", true.into())]);
    let first = JsFuture::from(model.call("x=1024,64".into(), checked()))
        .await
        .expect("the first call runs");
    assert!(max_abs_err(&first) < 1e-3);
    let first = products(&first);
    assert_eq!(first.len(), 2, "{first:?}");
    for product in &first {
        assert!(product.contains(" naive (building "), "{product}");
    }
    JsFuture::from(tailor.wait_for_builds())
        .await
        .expect("the browser builds the large forms");
    let tuned = JsFuture::from(model.call("x=1024,64".into(), checked()))
        .await
        .expect("the next call runs");
    assert!(max_abs_err(&tuned) < 1e-3);
    let tuned = products(&tuned);
    for (before, after) in first.iter().zip(&tuned) {
        let (kernel, built) = before
            .split_once(" naive (building ")
            .expect("checked above");
        assert_eq!(after, &format!("{kernel} {}", built.trim_end_matches(')')));
    }
    JsFuture::from(tailor.set_tiers(was.as_bool().unwrap_or(false)))
        .await
        .expect("set back");
}

/// `setSubgroups` resolves to whether row reductions run by subgroup now: what was asked
/// where the device has subgroups (`adapter.subgroups`), never otherwise; and the values
/// match the reference either way.
#[wasm_bindgen_test]
async fn subgroups_switch_where_the_device_has_them() {
    let tailor = Tailor::create(object(&[("device", "auto".into())]))
        .await
        .expect("created");
    let has = get(&tailor.adapter(), "subgroups")
        .as_bool()
        .unwrap_or(false);
    let model = tailor
        .compile(tailor::SIMPLENET_SOURCE, options("true"))
        .expect("SimpleNet compiles");
    for on in [false, true] {
        let now = JsFuture::from(tailor.set_subgroups(on)).await.expect("set");
        assert_eq!(now.as_bool(), Some(on && has), "asked {on}, has {has}");
        let result = JsFuture::from(model.call("x=8,64".into(), object(&[("check", true.into())])))
            .await
            .expect("the call runs");
        assert!(max_abs_err(&result) < 1e-3);
    }
}

/// Read-back nudges are on by default and `setNudges` resolves to whether they were on.
/// With them on, a call nudges the browser while its output is mapped
/// (`gpuStats().nudgesSent`), every 1 ms and 8 times at most: on an emulated GPU the first
/// call at 1024 rows lasts longer than that and is nudged 8 times, and the next at that
/// size none (its plan's last read-back waited longer than 4 ms); with them off none is.
/// The calls at 8 rows, and on a hardware GPU every call, end sooner: at most 8. The values
/// match the reference either way. On the CPU there is nothing to nudge.
#[wasm_bindgen_test]
async fn nudges_switch_and_are_counted_where_a_read_back_waits() {
    let tailor = Tailor::create(object(&[("device", "auto".into())]))
        .await
        .expect("created");
    let model = tailor
        .compile(tailor::SIMPLENET_SOURCE, options("true"))
        .expect("SimpleNet compiles");
    let on_gpu = tailor.device() == "gpu";
    let emulated = on_gpu && get(&tailor.adapter(), "emulated").as_bool() == Some(true);
    let sent = async || {
        let stats = JsFuture::from(tailor.gpu_stats()).await.expect("stats");
        (!stats.is_null()).then(|| get(&stats, "nudgesSent").as_f64().expect("a count"))
    };
    let mut was = Vec::new();
    let mut nudges = Vec::new();
    for (on, rows) in [(true, 1024), (true, 1024), (false, 8), (true, 8)] {
        was.push(
            JsFuture::from(tailor.set_nudges(on))
                .await
                .expect("set")
                .as_bool(),
        );
        let before = sent().await;
        let shapes = format!("x={rows},64");
        let result = JsFuture::from(model.call(shapes.into(), object(&[("check", true.into())])))
            .await
            .expect("the call runs");
        assert!(max_abs_err(&result) < 1e-3, "nudges {on} at {rows} rows");
        nudges.push(
            sent()
                .await
                .zip(before)
                .map(|(after, before)| after - before),
        );
    }
    if !on_gpu {
        assert_eq!(was, [Some(false); 4]);
        assert_eq!(nudges, [None; 4], "no GPU stats on the CPU");
        return;
    }
    assert_eq!(
        was,
        [Some(true), Some(true), Some(true), Some(false)],
        "on by default"
    );
    let sent: Vec<f64> = nudges.into_iter().map(|n| n.expect("counted")).collect();
    assert_eq!(sent[2], 0.0, "none while off: {sent:?}");
    if emulated {
        assert_eq!([sent[0], sent[1]], [8.0, 0.0], "{sent:?}");
    }
    assert!(sent.iter().all(|&n| n <= 8.0), "{sent:?}");
}

#[wasm_bindgen_test]
async fn a_compilation_shows_its_kernels_and_runs_every_mode() {
    let model = simplenet("true").await;
    let compilation = model.trace("x=8,64".into()).expect("SimpleNet traces");
    let schedule = compilation.schedule().expect("SimpleNet lowers");
    assert_eq!(
        get(&schedule, "entryMode").as_string().as_deref(),
        Some("dynamic")
    );
    let kernels = Array::from(&get(&schedule, "kernels"));
    assert_eq!(
        get(&kernels.get(0), "name").as_string().as_deref(),
        Some("k0_linear_relu")
    );
    for (mode, marker) in [
        ("static", "const"),
        ("override", "override s0"),
        ("dynamic", "dims.s0"),
    ] {
        let wgsl = Array::from(&compilation.wgsl(mode.into()).expect("emits"));
        let source = get(&wgsl.get(0), "source").as_string().expect("source");
        assert!(source.contains(marker), "{mode}: {source}");
        let run = compilation.run(object(&[
            ("mode", mode.into()),
            ("shapes", "x=16,64".into()),
        ]));
        let result = JsFuture::from(run).await.expect("runs");
        assert!(max_abs_err(&result) < 1e-3, "{mode}");
    }
    let error = JsFuture::from(compilation.run(object(&[("shapes", "x=1,64".into())])))
        .await
        .expect_err("batch 1 fails the guard 2 <= s0");
    assert_eq!(get(&error, "kind").as_string().as_deref(), Some("call"));
}

fn quiz_error_message(result: Result<JsValue, JsValue>) -> String {
    let error = result.expect_err("a quiz error");
    assert_eq!(
        get(&error, "name").as_string().as_deref(),
        Some("TailorError")
    );
    assert_eq!(get(&error, "kind").as_string().as_deref(), Some("quiz"));
    get(&error, "message").as_string().expect("a message")
}

#[wasm_bindgen_test]
fn quiz_questions_and_checks_reach_js_in_camel_case() {
    let questions = Array::from(&Tailor::quiz_questions());
    assert_eq!(questions.length(), 14);
    let first = questions.get(0);
    assert_eq!(get(&first, "id").as_string().as_deref(), Some("q1"));
    assert!(get(&get(&first, "factCheck"), "materialKey").is_object());
    assert!(get(&first, "fact_check").is_undefined());

    let selected = Array::of1(&"C".into());
    let answer = Tailor::quiz_check("q1", selected.into()).expect("checked");
    assert_eq!(get(&answer, "correct").as_bool(), Some(true));
    let answer = Tailor::quiz_check("q1", "b".into()).expect("one id as a string");
    assert_eq!(get(&answer, "correct").as_bool(), Some(false));

    let message = quiz_error_message(Tailor::quiz_check("q99", Array::new().into()));
    assert!(message.contains("unknown question 'q99'"), "{message}");
    let message = quiz_error_message(Tailor::quiz_check("q1", JsValue::from(5)));
    assert!(message.starts_with("selected:"), "{message}");

    let runs = Array::from(&Tailor::demo_run("q1").expect("the demo runs"));
    let compiles: Vec<f64> = runs
        .iter()
        .map(|run| get(&run, "compiles").as_f64().expect("a count"))
        .collect();
    assert_eq!(compiles, [2.0, 1.0, 3.0]);
    let message = quiz_error_message(Tailor::demo_run("q9"));
    assert!(message.contains("has no demo"), "{message}");
}

#[wasm_bindgen_test]
fn exercises_generate_and_grade_through_js() {
    for kind in Tailor::exercise_kinds() {
        let exercise =
            Tailor::exercise_generate(&kind, JsValue::from(7), "mid").expect("generated");
        assert_eq!(get(&exercise, "kind").as_string(), Some(kind.clone()));
        assert!(get(&exercise, "answerFormat").is_object());
        assert!(get(&get(&exercise, "replay"), "calls").is_array());
        let solution = Tailor::exercise_solve(&kind, "7".into(), "mid").expect("solved");
        let grade =
            Tailor::exercise_grade(&kind, JsValue::from(7), "mid", &solution).expect("graded");
        assert_eq!(get(&grade, "correct").as_bool(), Some(true), "{kind}");
    }
    for seed in [
        JsValue::from(-1),
        JsValue::from(1.5),
        JsValue::from(4_294_967_296.0),
        "x".into(),
        JsValue::NULL,
    ] {
        let message = quiz_error_message(Tailor::exercise_generate("output_shape", seed, "easy"));
        assert!(message.starts_with("seed:"), "{message}");
    }
    let message = quiz_error_message(Tailor::exercise_generate(
        "shapes",
        JsValue::from(1),
        "easy",
    ));
    assert!(
        message.contains("unknown exercise kind 'shapes'"),
        "{message}"
    );
    let message = quiz_error_message(Tailor::exercise_grade(
        "output_shape",
        JsValue::from(1),
        "insane",
        "[s0]",
    ));
    assert!(message.contains("unknown difficulty 'insane'"), "{message}");
}

#[wasm_bindgen_test]
async fn the_material_script_runs_in_the_browser_with_its_clock_and_logs() {
    let tailor = Tailor::create(JsValue::UNDEFINED).await.expect("created");
    let options = js_sys::Object::new();
    Reflect::set(&options, &"logs".into(), &"recompiles".into()).expect("an object");
    let run = tailor
        .script(&Tailor::material_demo(), options.into())
        .expect("the options are valid");
    assert!(get(&run, "error").is_null(), "{:?}", get(&run, "error"));
    let text: String = Array::from(&get(&run, "output"))
        .iter()
        .map(|piece| get(&piece, "text").as_string().expect("text"))
        .collect();
    // Six compiles, as PyTorch's default back end (tests/it/script.rs).
    assert!(
        text.contains("[0/5] [__recompiles] Recompiling function forward in script.py:17"),
        "{text}"
    );
    assert!(!text.contains("[0/6]"), "{text}");
    assert!(text.contains("动态形状总耗时: "), "{text}");
    assert!(
        text.ends_with("多种 batch size 下输出形状均正确\n"),
        "{text}"
    );
}
