//! The browser boundary: the only code that knows JavaScript exists (wasm32 only).
//!
//! In: strings from the page (`www/app.js`): model source and input shapes such as `x=8,64`.
//! Out: the compiler's trace as text, or a `JsError` whose message is the compiler's error,
//! which JavaScript sees as a thrown `Error`. Page logic stays in `www/app.js`; this module
//! only translates between JS values and the compiler's plain Rust API.

use wasm_bindgen::prelude::*;

/// Runs once when the module is instantiated: routes Rust panics to `console.error`, so a
/// bug shows its message and location in the browser console instead of a bare
/// `RuntimeError: unreachable`.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// Compiles `source` for `input_shapes` (`x=8,64;y=3`) under the default mode and returns
/// the trace as text; a user error (bad source, bad shapes) becomes a thrown JS `Error`.
#[wasm_bindgen(js_name = explainText)]
pub fn explain_text(source: &str, input_shapes: &str) -> Result<String, JsError> {
    crate::explain_text(source, input_shapes).map_err(|message| JsError::new(&message))
}

/// The material's `SimpleNet` source, so the page's editor starts from the same text the
/// compiler's tests use instead of a copy kept in JavaScript.
#[wasm_bindgen(js_name = simplenetSource)]
pub fn simplenet_source() -> String {
    crate::SIMPLENET_SOURCE.to_owned()
}
