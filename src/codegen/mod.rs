//! Codegen: one lowered `Kernel` to WGSL source, with sizes passed one of four ways.
//!
//! In: a schedule, one of its kernels and a [`Specialization`]. Out: a [`Wgsl`] — the
//! source, its resource bindings, and which symbols the host must supply (as override
//! constants, in the `dims` uniform or as immediates). The four ways to pass sizes:
//!
//! - **static**: every size is a number baked into the source (`const M: i32 = 8i;`), the
//!   index formulas are folded to constants, and bounds checks disappear where the sizes
//!   divide the tile — the fastest code, but one shader (and one compile) per shape;
//! - **override**: sizes are WGSL `override` constants (`override s0: i32;`) — one module,
//!   specialised by the driver at pipeline creation, so one pipeline per shape;
//! - **dynamic**: every shape symbol the kernel uses is a field of one uniform struct
//!   (`dims.s0`) — one pipeline serves every shape; the host computes the dispatch size;
//! - **immediate**: the same struct as WGSL immediates (`var<immediate> dims: Dims;`), set by
//!   the host with each dispatch (`setImmediates`) — one pipeline for every shape, and no
//!   uniform buffer to write or bind; it needs a device with immediates.
//!
//! Invariant: if `lower` returned `Ok`, emission cannot fail, and the text is valid WGSL
//! (every string is checked with naga in the tests). Identifiers are stable: buffers by
//! their schedule names (`in0`, `p_layers_0_weight`, `t1`, `out0`), index variables by
//! name (`gid`, `row`, `col`, `kk`), derived sizes `z0`, shape symbols `s0` / `dims.s0`.

mod body;
mod value;

use crate::lower::{Body, BufferId, GemmStrategy, Kernel, Schedule};
use crate::symbolic::{Bindings, Expr, Sym, SymbolNames, WGSL_HELPERS, WGSL_RATIO_HELPER};
use std::fmt::Write;

/// How sizes reach a kernel (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Sizes baked into the source as constants.
    Static,
    /// Sizes as WGSL `override` constants, fixed at pipeline creation.
    Override,
    /// Sizes in a uniform buffer, read at run time.
    Dynamic,
    /// Sizes as WGSL immediates (`var<immediate>`), set per dispatch by the host: no
    /// buffer, no binding (where the device has immediates).
    Immediate,
}

impl Mode {
    /// All four, in the order the page compares them.
    pub const ALL: [Mode; 4] = [Mode::Static, Mode::Override, Mode::Dynamic, Mode::Immediate];

    /// `static`, `override` or `dynamic`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Static => "static",
            Mode::Override => "override",
            Mode::Dynamic => "dynamic",
            Mode::Immediate => "immediate",
        }
    }
}

/// A mode plus, for static code, the sizes to bake in.
#[derive(Clone, Copy, Debug)]
pub enum Specialization<'a> {
    /// Bake these symbol values into the source.
    Static(&'a Bindings),
    /// Leave sizes to override constants.
    Override,
    /// Read sizes from the `dims` uniform.
    Dynamic,
    /// Read sizes from the `dims` immediates.
    Immediate,
}

impl<'a> Specialization<'a> {
    /// The specialisation of `mode`; `bindings` fixes the sizes of static code (unused
    /// otherwise).
    pub fn of(mode: Mode, bindings: &'a Bindings) -> Specialization<'a> {
        match mode {
            Mode::Static => Specialization::Static(bindings),
            Mode::Override => Specialization::Override,
            Mode::Dynamic => Specialization::Dynamic,
            Mode::Immediate => Specialization::Immediate,
        }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        match self {
            Specialization::Static(_) => Mode::Static,
            Specialization::Override => Mode::Override,
            Specialization::Dynamic => Mode::Dynamic,
            Specialization::Immediate => Mode::Immediate,
        }
    }
}

/// One resource of a kernel, in binding order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// A storage buffer read by the kernel.
    Read(BufferId),
    /// A storage buffer read by the kernel as `vec4`s: a blocked or naive product's operand
    /// whose reduction runs along aligned runs of 4 (`lower::Kernel::vec4_operands`).
    ReadVec4(BufferId),
    /// The storage buffer the kernel writes.
    Write(BufferId),
    /// The `dims` uniform (dynamic mode, when the kernel uses any symbol).
    Dims,
}

/// The WGSL of one kernel and what the host must bind and supply.
#[derive(Clone, Debug, PartialEq)]
pub struct Wgsl {
    /// The kernel's name (the entry point is always `main`).
    pub kernel: String,
    /// How sizes are passed.
    pub mode: Mode,
    /// The source.
    pub source: String,
    /// `@binding(i)` is `resources[i]`, all in `@group(0)`.
    pub resources: Vec<Resource>,
    /// Symbols the host supplies: override constants (`override` mode) or the fields of
    /// the `dims` uniform, in order, as `i32` (`dynamic` mode). Empty for static code.
    pub symbols: Vec<Sym>,
}

impl Wgsl {
    /// The override constants of the kernel's pipeline: each size symbol's name (as the
    /// source names it) with its value in `overrides`.
    pub fn override_constants(&self, overrides: &[i64]) -> Vec<(String, f64)> {
        self.symbols
            .iter()
            .map(Sym::to_string)
            .zip(overrides.iter().map(|&value| value as f64))
            .collect()
    }
}

/// Emits the WGSL of `kernel` (of `schedule`) for `spec`.
///
/// Kernels always name symbols by their numbers (`dims.s0`, `override s0`), whatever names a
/// trace shows: the host binds override constants by these names.
pub fn emit_wgsl(schedule: &Schedule, kernel: &Kernel, spec: &Specialization<'_>) -> Wgsl {
    SymbolNames::tailor().show(|| emit_kernel(schedule, kernel, spec, false))
}

/// The WGSL of `kernel` for an adapter with subgroup operations (wgpu's `SUBGROUP`
/// feature), where they change it: a row reduction combines its threads' parts by
/// subgroup, and a blocked product shares its rows of `a` across the lanes of a subgroup.
/// `None` for every other kernel. No `enable subgroups;` line: naga has not implemented the
/// directive (and takes the functions without it); the page's runtime adds it for the
/// browser, whose WGSL wants it.
pub fn emit_wgsl_with_subgroups(
    schedule: &Schedule,
    kernel: &Kernel,
    spec: &Specialization<'_>,
) -> Option<Wgsl> {
    let changed = match &kernel.body {
        Body::Rows(_) => true,
        Body::Gemm(gemm) => gemm.strategy == GemmStrategy::Blocked,
        Body::Map { .. } | Body::Pool(_) => false,
    };
    changed.then(|| SymbolNames::tailor().show(|| emit_kernel(schedule, kernel, spec, true)))
}

fn emit_kernel(
    schedule: &Schedule,
    kernel: &Kernel,
    spec: &Specialization<'_>,
    subgroups: bool,
) -> Wgsl {
    let mode = spec.mode();
    let symbols = match mode {
        Mode::Static => Vec::new(),
        Mode::Override | Mode::Dynamic | Mode::Immediate => kernel.shape_syms(),
    };
    let vec4 = match &kernel.body {
        Body::Gemm(gemm) if gemm.strategy != GemmStrategy::Tiled => kernel.vec4_operands(),
        _ => None,
    };
    let mut resources: Vec<Resource> = kernel
        .reads()
        .into_iter()
        .filter(|&id| id != kernel.output)
        .map(|id| match &vec4 {
            Some(v) if v.a == id || v.b == id => Resource::ReadVec4(id),
            _ => Resource::Read(id),
        })
        .collect();
    resources.push(Resource::Write(kernel.output));
    if mode == Mode::Dynamic && !symbols.is_empty() {
        resources.push(Resource::Dims);
    }
    let writer = value::Writer::new(schedule, kernel, spec);
    let body = body::emit(&writer, vec4.as_ref(), subgroups);
    let mut source = format!(
        "// {}: {} ({} sizes)\n",
        kernel.name,
        kernel.node_names.join(" + "),
        mode.name()
    );
    if matches!(mode, Mode::Dynamic | Mode::Immediate) && !symbols.is_empty() {
        source.push_str("\nstruct Dims {\n");
        for sym in &symbols {
            let _ = writeln!(source, "    {sym}: i32,");
        }
        source.push_str("}\n");
    }
    source.push('\n');
    for (binding, resource) in resources.iter().enumerate() {
        let declaration = match resource {
            Resource::Read(id) => format!(
                "var<storage, read> {}: array<f32>",
                schedule.buffer(*id).name
            ),
            Resource::ReadVec4(id) => format!(
                "var<storage, read> {}: array<vec4<f32>>",
                schedule.buffer(*id).name
            ),
            Resource::Write(id) => format!(
                "var<storage, read_write> {}: array<f32>",
                schedule.buffer(*id).name
            ),
            Resource::Dims => "var<uniform> dims: Dims".to_string(),
        };
        let _ = writeln!(source, "@group(0) @binding({binding}) {declaration};");
    }
    if mode == Mode::Immediate && !symbols.is_empty() {
        source.push_str("var<immediate> dims: Dims;\n");
    }
    if mode == Mode::Override {
        source.push('\n');
        for sym in &symbols {
            let _ = writeln!(source, "override {sym}: i32;");
        }
    }
    if !writer.consts.borrow().is_empty() {
        source.push('\n');
        for (name, value) in writer.consts.borrow().iter() {
            let _ = writeln!(source, "const {name}: i32 = {value};");
        }
    }
    for helper in value::helpers(&body) {
        source.push('\n');
        source.push_str(helper);
    }
    if ["floor_div_i32", "floor_mod_i32", "pow_i32"]
        .iter()
        .any(|helper| body.contains(helper))
    {
        source.push('\n');
        source.push_str(WGSL_HELPERS);
    }
    if body.contains("tailor_ratio_bits") {
        source.push('\n');
        source.push_str(WGSL_RATIO_HELPER);
    }
    source.push('\n');
    source.push_str(&body);
    Wgsl {
        kernel: kernel.name.clone(),
        mode,
        source,
        resources,
        symbols,
    }
}

/// The mode a cache entry runs in: static when its schedule has no shape symbol left (a
/// static entry), dynamic otherwise (one pipeline for every size the guards accept).
pub fn entry_mode(schedule: &Schedule) -> Mode {
    if schedule.shape_syms().is_empty() {
        Mode::Static
    } else {
        Mode::Dynamic
    }
}

/// Emits every kernel of `schedule` for `spec`, in launch order.
pub fn emit_schedule(schedule: &Schedule, spec: &Specialization<'_>) -> Vec<Wgsl> {
    schedule
        .kernels
        .iter()
        .map(|kernel| emit_wgsl(schedule, kernel, spec))
        .collect()
}

/// The value of `expr` in static code, when every symbol in it is bound.
fn static_value(expr: &Expr, bindings: &Bindings) -> Option<i64> {
    expr.eval(bindings)
}
