//! The kernel half of the JS API: the views of a run's results and of an entry's fusion
//! groups, memory plan and WGSL.
//!
//! In: an executor's `Outcome`, an entry's `Schedule` and WGSL. Out: camelCase views for the
//! page. Invariant: every text here is the compiler's own (`Schedule`'s `Display`, the
//! emitted WGSL); the page never re-derives a kernel, a size or a binding.

use super::convert::{js_product, js_run_fields, set, tensors_to_js, to_js};
use crate::codegen::{self, Mode, Resource, Wgsl};
use crate::lower::{self, Body, GemmStrategy, Kernel, Role, Schedule};
use crate::session::executor::{Outcome, ProductRun};
use crate::symbolic::Sym;
use serde::Serialize;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

/// The mode named `name` (`static`, `override`, `dynamic`).
pub(super) fn parse_mode(name: &str) -> Option<Mode> {
    Mode::ALL.into_iter().find(|mode| mode.name() == name)
}

/// Sets what a run adds to a result object: `ms` (the call's times, when given), `outputs`,
/// `device`, `products` (on the GPU: each product kernel, the strategy it ran with at the
/// call's sizes and the large form building meanwhile, with tiers; a frozen array, which
/// the next run that ran the same forms shares), `maxAbsErr` (when checked against the CPU
/// reference) and `kernelMs` / `timing` (when per-kernel times were measured).
pub(super) fn set_run_fields(result: &JsValue, ms: Option<&JsValue>, device: &str, ran: &Outcome) {
    let products = products_to_js(&ran.products);
    let device = wasm_bindgen::intern(device);
    let outputs = tensors_to_js(&ran.outputs);
    js_run_fields(result, ms, &outputs, device, &products);
    if let Some(err) = ran.max_abs_err {
        // JSON has no infinity: a shape mismatch or a NaN reads as `null`.
        let err = if err.is_finite() {
            JsValue::from(err)
        } else {
            JsValue::NULL
        };
        set(result, "maxAbsErr", &err);
    }
    if !ran.kernel_ms.is_empty() {
        let times: Vec<KernelTime> = ran
            .kernel_ms
            .iter()
            .map(|(kernel, ms)| KernelTime {
                kernel: kernel.clone(),
                ms: *ms,
            })
            .collect();
        set(result, "kernelMs", &to_js(&times));
        set(result, "timing", &JsValue::from_str(ran.timing));
    }
}

thread_local! {
    /// The last run's products and the frozen array made of them. A steady call runs the
    /// same forms every time: sharing the array spares each call building it again after
    /// its read-back, where host work adds to the call's time.
    static LAST_PRODUCTS: RefCell<Option<(Vec<ProductRun>, JsValue)>> = const { RefCell::new(None) };
}

/// `products` as a frozen array of frozen `{ kernel, strategy, building }`.
fn products_to_js(products: &[ProductRun]) -> JsValue {
    LAST_PRODUCTS.with_borrow_mut(|last| {
        if let Some((ran, array)) = last.as_ref()
            && ran.as_slice() == products
        {
            return array.clone();
        }
        let array = js_sys::Array::new();
        for product in products {
            // Strings from a small set, sent every call: interned (`convert::interned`).
            let building = product.building.map_or("", |form| form.name());
            js_product(
                &array,
                wasm_bindgen::intern(&product.kernel),
                wasm_bindgen::intern(product.strategy.name()),
                wasm_bindgen::intern(building),
            );
        }
        let array: JsValue = js_sys::Object::freeze(array.unchecked_ref::<js_sys::Object>()).into();
        *last = Some((products.to_vec(), JsValue::clone(&array)));
        array
    })
}

/// One kernel's measured time.
#[derive(Serialize)]
struct KernelTime {
    kernel: String,
    ms: f64,
}

/// One kernel of a schedule: what it fuses, its printed body and its dispatch.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct KernelView {
    id: usize,
    /// `k0_linear_relu`.
    name: String,
    /// Graph node ids computed here: the root, then the fused elementwise chain.
    nodes: Vec<usize>,
    /// Their names.
    node_names: Vec<String>,
    /// `map`, `gemm`, `rows` or `pool`.
    kind: &'static str,
    /// The form a product runs as here (`tiled`, `blocked`, `naive`); `None` otherwise.
    form: Option<&'static str>,
    /// The kernel's lines of the schedule's text form (sizes, body, dispatch).
    text: String,
    /// The dispatch formula (workgroups).
    workgroups: String,
    /// Threads per workgroup.
    workgroup_size: u32,
    /// Buffers read.
    reads: Vec<String>,
    /// The buffer written.
    writes: String,
    /// Shape symbols the kernel depends on.
    symbols: Vec<String>,
}

/// One tenant of a buffer in the memory plan.
#[derive(Serialize)]
pub(super) struct TenantView {
    /// The graph node whose value it holds.
    node: String,
    /// The kernel that writes it.
    from: usize,
    /// The last kernel that reads it (`null`: the caller).
    until: Option<usize>,
}

/// One buffer of the memory plan.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BufferView {
    name: String,
    /// `input`, `param`, `output` or `temporary`.
    role: &'static str,
    /// Length in elements (symbolic).
    len_elems: String,
    /// The values it holds over time (a temporary may hold several).
    tenants: Vec<TenantView>,
}

/// The lowered schedule of an entry.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ScheduleView {
    /// `static` or `dynamic`: the mode the entry's kernels run in.
    entry_mode: &'static str,
    kernels: Vec<KernelView>,
    buffers: Vec<BufferView>,
    /// What lowering decided and why (fusions, folds).
    notes: Vec<String>,
    /// The whole text form, as the trace prints it.
    text: String,
}

/// The lines of each kernel in the schedule's text form (its header excluded).
fn kernel_lines(printed: &str, name: &str) -> String {
    let header = format!("  {name}: ");
    let lines: Vec<&str> = printed.lines().collect();
    let Some(start) = lines.iter().position(|line| line.starts_with(&header)) else {
        return String::new();
    };
    lines[start + 1..]
        .iter()
        .take_while(|line| line.starts_with("    "))
        .map(|line| &line[4..])
        .collect::<Vec<_>>()
        .join("\n")
}

/// The view of `schedule`, each product kernel with the form `form` says it runs as.
pub(super) fn schedule_view(
    schedule: &Schedule,
    form: impl Fn(&Kernel) -> Option<GemmStrategy>,
) -> ScheduleView {
    let printed = schedule.to_string();
    let name = |id: lower::BufferId| schedule.buffer(id).name.clone();
    ScheduleView {
        entry_mode: codegen::entry_mode(schedule).name(),
        kernels: schedule
            .kernels
            .iter()
            .map(|kernel| KernelView {
                id: kernel.id,
                name: kernel.name.clone(),
                nodes: kernel.nodes.iter().map(|n| n.index()).collect(),
                node_names: kernel.node_names.clone(),
                kind: match kernel.body {
                    Body::Map { .. } => "map",
                    Body::Gemm(_) => "gemm",
                    Body::Rows(_) => "rows",
                    Body::Pool(_) => "pool",
                },
                form: form(kernel).map(GemmStrategy::name),
                text: kernel_lines(&printed, &kernel.name),
                workgroups: kernel.workgroups.to_string(),
                workgroup_size: kernel.workgroup_size,
                reads: kernel
                    .reads()
                    .into_iter()
                    .filter(|&id| id != kernel.output)
                    .map(name)
                    .collect(),
                writes: name(kernel.output),
                symbols: kernel.shape_syms().iter().map(Sym::to_string).collect(),
            })
            .collect(),
        buffers: schedule
            .buffers
            .iter()
            .enumerate()
            .map(|(id, buffer)| BufferView {
                name: buffer.name.clone(),
                role: match buffer.role {
                    Role::Input(_) => "input",
                    Role::Param(_) => "param",
                    Role::Output(_) => "output",
                    Role::Temp => "temporary",
                },
                len_elems: buffer.len_elems.to_string(),
                tenants: schedule
                    .placements
                    .iter()
                    .filter(|p| p.buffer.index() == id)
                    .map(|p| TenantView {
                        node: p.node_name.clone(),
                        from: p.first_kernel,
                        until: p.last_kernel,
                    })
                    .collect(),
            })
            .collect(),
        notes: schedule.notes.clone(),
        text: printed,
    }
}

/// One resource binding of a kernel.
#[derive(Serialize)]
pub(super) struct BindingView {
    binding: usize,
    /// `read`, `read_write` or `uniform`.
    access: &'static str,
    /// The WGSL name (`in0`, `p_layers_0_weight`, `dims`).
    name: String,
}

/// The WGSL of one kernel in one mode.
#[derive(Serialize)]
pub(super) struct WgslView {
    kernel: String,
    mode: &'static str,
    source: String,
    /// Symbols the host supplies (override constants or `dims` fields), in order.
    symbols: Vec<String>,
    bindings: Vec<BindingView>,
}

/// The views of every kernel's WGSL (emitted by the compile pipeline).
pub(super) fn wgsl_views(schedule: &Schedule, emitted: &[Wgsl]) -> Vec<WgslView> {
    emitted
        .iter()
        .cloned()
        .map(|wgsl| WgslView {
            kernel: wgsl.kernel,
            mode: wgsl.mode.name(),
            symbols: wgsl.symbols.iter().map(Sym::to_string).collect(),
            bindings: wgsl
                .resources
                .iter()
                .enumerate()
                .map(|(binding, resource)| match resource {
                    Resource::Read(id) => BindingView {
                        binding,
                        access: "read",
                        name: schedule.buffer(*id).name.clone(),
                    },
                    Resource::ReadVec4(id) => BindingView {
                        binding,
                        access: "read (vec4)",
                        name: schedule.buffer(*id).name.clone(),
                    },
                    Resource::Write(id) => BindingView {
                        binding,
                        access: "read_write",
                        name: schedule.buffer(*id).name.clone(),
                    },
                    Resource::Dims => BindingView {
                        binding,
                        access: "uniform",
                        name: "dims".into(),
                    },
                })
                .collect(),
            source: wgsl.source,
        })
        .collect()
}
