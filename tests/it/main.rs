//! The integration tests: one binary (matklad's habit), one module per area.

mod kernels;
mod models;
mod wgsl;
