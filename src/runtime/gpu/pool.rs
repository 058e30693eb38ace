//! The GPU runtime's buffer pool: scratch, uniform and read-back buffers kept across calls.
//!
//! In: a usage and a byte size. Out: a buffer at least that large, from the free list or
//! newly created; buffers handed back after a call. Invariant: buffers are keyed by usage
//! and power-of-two size (64 KiB at least, uniforms excepted), so a pooled buffer only
//! serves requests it fits; `bytes` counts every buffer the pool created and still holds
//! (a new pool, after a device loss or `clear_cache`, starts at zero).

use std::collections::HashMap;

/// Buffers kept for reuse, by usage and size class ([`size_class`]: calls of nearby sizes
/// share buffers).
#[derive(Default)]
pub(super) struct Pool {
    free: HashMap<(u32, u64), Vec<wgpu::Buffer>>,
    /// Bytes of every buffer created, pooled or lent out.
    pub(super) bytes: u64,
}

impl Pool {
    /// A buffer of `usage` and at least `size` bytes: a pooled one, else a new one.
    pub(super) fn acquire(
        &mut self,
        device: &wgpu::Device,
        usage: wgpu::BufferUsages,
        size: u64,
    ) -> wgpu::Buffer {
        let size = size_class(usage, size);
        if let Some(buffer) = self.free.get_mut(&(usage.bits(), size)).and_then(Vec::pop) {
            return buffer;
        }
        self.bytes += size;
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tailor pool"),
            size,
            usage,
            mapped_at_creation: false,
        })
    }

    /// Whether the free list holds a buffer of `usage` for every request of `sizes`, so that
    /// acquiring them creates nothing.
    pub(super) fn holds(&self, usage: wgpu::BufferUsages, sizes: &[u64]) -> bool {
        let mut wanted: HashMap<u64, usize> = HashMap::new();
        for &size in sizes {
            *wanted.entry(size_class(usage, size)).or_default() += 1;
        }
        wanted.into_iter().all(|(size, count)| {
            self.free
                .get(&(usage.bits(), size))
                .is_some_and(|free| free.len() >= count)
        })
    }

    /// Hands `buffer` back for later calls.
    pub(super) fn release(&mut self, buffer: wgpu::Buffer) {
        self.free
            .entry((buffer.usage().bits(), buffer.size()))
            .or_default()
            .push(buffer);
    }
}

/// The smallest size class of the buffers but uniforms: requests below it share it, as
/// PyTorch's caching allocator serves small tensors from shared blocks. So the calls of a
/// small model at nearby batch sizes bind one set of buffers, and a new batch size creates
/// nothing: measured in headless Chromium (SwiftShader), SimpleNet's first call at 16 rows
/// after 8 took 2.5 ms with classes from 16 bytes, which gave it new buffers and bind
/// groups, against 1.56 ms steady; with this class, 1.6 ms. The cost is memory: 64 KiB
/// for each small buffer a call holds.
const SMALLEST_CLASS: u64 = 64 * 1024;

/// The size of the pooled buffers of `usage` that serve a request of `bytes`.
pub(super) fn size_class(usage: wgpu::BufferUsages, bytes: u64) -> u64 {
    let smallest = match usage.contains(wgpu::BufferUsages::UNIFORM) {
        true => 16,
        false => SMALLEST_CLASS,
    };
    bytes.max(smallest).next_power_of_two()
}
