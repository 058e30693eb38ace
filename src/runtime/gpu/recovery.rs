//! Opening the device and recovering from its loss: a lost device (driver reset,
//! `destroy_device`) is recreated, on another adapter if its own refuses.
//!
//! In: the adapter. Out: a device, its queue and its limits. Invariant: no cached resource
//! outlives its device — recreating the device or clearing the cache drops pipelines and
//! pooled buffers and bumps `generation`, so programs re-upload their parameters.

use super::pool::Pool;
use super::{Gpu, GpuError};
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl Gpu {
    /// Drops every cached pipeline and pooled buffer (programs re-upload their parameters),
    /// so the next calls pay full price again — what a fresh process would pay.
    pub fn clear_cache(&mut self) {
        self.pipelines.clear();
        self.bound.clear();
        self.pool = Pool::default();
        self.param_bytes = 0;
        self.generation += 1;
        self.decisions += 1;
    }

    /// Destroys the device, as a driver reset would; the next call recreates it. For tests
    /// of the recovery path.
    pub fn destroy_device(&self) {
        self.device.destroy();
    }

    /// Flags the device as lost and keeps its uncaptured errors, for `run` to see.
    pub(super) fn watch_device(&mut self) {
        let lost = self.lost.clone();
        self.device
            .set_device_lost_callback(move |_, _| lost.store(true, Ordering::SeqCst));
        let uncaptured = self.uncaptured.clone();
        self.device.on_uncaptured_error(Arc::new(move |error| {
            *uncaptured.lock().expect("error lock") = Some(error.to_string());
        }));
    }

    /// Recreates the device after a loss; every cached resource belonged to the old one.
    pub(super) async fn recover(&mut self) -> Result<(), GpuError> {
        if !self.lost.load(Ordering::SeqCst) {
            return Ok(());
        }
        let opened = match open_device(&self.adapter).await {
            Ok(opened) => opened,
            Err(_) => {
                self.adapter = self
                    .instance
                    .request_adapter(&wgpu::RequestAdapterOptions::default())
                    .await
                    .map_err(|e| GpuError::DeviceLost(e.to_string()))?;
                open_device(&self.adapter)
                    .await
                    .map_err(|e| GpuError::DeviceLost(e.to_string()))?
            }
        };
        (self.device, self.queue, self.limits) = opened;
        self.lost.store(false, Ordering::SeqCst);
        self.generation += 1;
        self.decisions += 1;
        self.pipelines.clear();
        self.bound.clear();
        self.pool = Pool::default();
        self.param_bytes = 0;
        self.stats.devices_recreated += 1;
        self.watch_device();
        Ok(())
    }
}

/// Opens a device with the adapter's own limits, and timestamp queries, subgroup
/// operations and immediates where offered (in the page, the browser's subgroups and
/// immediates, which wgpu 30's web backend does not map: `browser.rs`).
pub(super) async fn open_device(
    adapter: &wgpu::Adapter,
) -> Result<(wgpu::Device, wgpu::Queue, wgpu::Limits), GpuError> {
    let features = adapter.features()
        & (wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SUBGROUP | wgpu::Features::IMMEDIATES);
    let limits = adapter.limits();
    #[cfg(target_arch = "wasm32")]
    let subgroups = super::browser::ask_for_subgroups();
    let requested = adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("tailor"),
        required_features: features,
        required_limits: limits.clone(),
        ..Default::default()
    });
    #[cfg(target_arch = "wasm32")]
    drop(subgroups);
    let (device, queue) = requested
        .await
        .map_err(|e| GpuError::Device(e.to_string()))?;
    // Immediates as the device takes them: natively only with wgpu's feature; on the web
    // the browser's, which wgpu 30's web backend does not map.
    #[cfg(not(target_arch = "wasm32"))]
    let max_immediate_size = match features.contains(wgpu::Features::IMMEDIATES) {
        true => limits.max_immediate_size,
        false => 0,
    };
    #[cfg(target_arch = "wasm32")]
    let max_immediate_size = super::browser::immediate_size(&device);
    let limits = wgpu::Limits {
        max_immediate_size,
        ..limits
    };
    Ok((device, queue, limits))
}
