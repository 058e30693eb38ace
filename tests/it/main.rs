//! The integration tests: one binary (matklad's habit), one module per area.

#[cfg(feature = "gpu")]
mod gpu;
mod kernels;
mod models;
mod wgsl;
