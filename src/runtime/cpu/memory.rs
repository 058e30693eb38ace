//! What one kernel sees of memory: every buffer it may read, and the window of its output
//! buffer that one job may write.
//!
//! In: slices of the call's buffers (the caller's inputs and the parameters are read in
//! place, temporaries and outputs live in the program's arena). Out: strided reads and
//! writes of whole blocks. Invariant: every access is checked once per block against the
//! slice it touches — the first and last offsets of a strided run bound all the others — and
//! a miss is `RunError::OutOfBounds` naming the kernel, the buffer and the offset.

use super::super::RunError;
use crate::lower::{Kernel, Schedule};

/// The buffers a kernel reads; its own output is an empty slice (kernels never read it).
pub(super) struct Memory<'a> {
    /// One slice per schedule buffer.
    pub buffers: Vec<&'a [f32]>,
    pub schedule: &'a Schedule,
    pub kernel: &'a Kernel,
}

impl Memory<'_> {
    /// `out[j] = buffer[start + stride * j]`.
    pub fn gather(
        &self,
        buffer: usize,
        start: i64,
        stride: i64,
        out: &mut [f32],
    ) -> Result<(), RunError> {
        let data = self.buffers[buffer];
        gather(data, start, stride, out).map_err(|offset| self.out_of_bounds(buffer, offset))
    }

    /// `buffer[offset]`.
    pub fn read(&self, buffer: usize, offset: i64) -> Result<f32, RunError> {
        usize::try_from(offset)
            .ok()
            .and_then(|o| self.buffers[buffer].get(o).copied())
            .ok_or_else(|| self.out_of_bounds(buffer, offset))
    }

    /// The error for an access at `offset` of `buffer`.
    pub fn out_of_bounds(&self, buffer: usize, offset: i64) -> RunError {
        RunError::OutOfBounds {
            kernel: self.kernel.name.clone(),
            buffer: self.schedule.buffers[buffer].name.clone(),
            offset,
            len_elems: self.buffers[buffer].len(),
        }
    }

    /// The error for a write at `offset` of the kernel's output, `len_elems` long.
    pub fn write_out_of_bounds(&self, offset: i64, len_elems: usize) -> RunError {
        RunError::OutOfBounds {
            kernel: self.kernel.name.clone(),
            buffer: self.schedule.buffer(self.kernel.output).name.clone(),
            offset,
            len_elems,
        }
    }
}

/// The part of the kernel's output buffer one job owns: elements `start..start + len`.
pub(super) struct Window<'a> {
    pub data: &'a mut [f32],
    /// Offset of `data[0]` in the buffer.
    pub start: i64,
    /// Length of the whole buffer (for errors).
    pub buffer_len: usize,
}

impl Window<'_> {
    /// The `len` elements from offset `start` of the buffer, to write in place.
    pub fn slice(
        &mut self,
        memory: &Memory<'_>,
        start: i64,
        len: usize,
    ) -> Result<&mut [f32], RunError> {
        let local = i128::from(start) - i128::from(self.start);
        let end = local + len as i128;
        if local < 0 || end > self.data.len() as i128 {
            let bad = if local < 0 {
                start
            } else {
                start.saturating_add(len as i64 - 1)
            };
            return Err(memory.write_out_of_bounds(bad, self.buffer_len));
        }
        Ok(&mut self.data[local as usize..end as usize])
    }

    /// `buffer[start + stride * j] = values[j]`.
    pub fn write(
        &mut self,
        memory: &Memory<'_>,
        start: i64,
        stride: i64,
        values: &[f32],
    ) -> Result<(), RunError> {
        let local = i128::from(start) - i128::from(self.start);
        let local = i64::try_from(local).unwrap_or(i64::MAX);
        scatter(self.data, local, stride, values).map_err(|offset| {
            memory.write_out_of_bounds(offset.saturating_add(self.start), self.buffer_len)
        })
    }
}

/// The smallest and largest offsets of `len` elements from `start` by `stride`, or the first
/// one outside `0..len_elems`.
fn extent(start: i64, stride: i64, len: usize, len_elems: usize) -> Result<(usize, usize), i64> {
    let last = i128::from(start) + i128::from(stride) * (len as i128 - 1);
    let (lo, hi) = (i128::from(start).min(last), i128::from(start).max(last));
    if lo < 0 {
        return Err(i64::try_from(lo).unwrap_or(i64::MIN));
    }
    if hi >= len_elems as i128 {
        return Err(i64::try_from(hi).unwrap_or(i64::MAX));
    }
    Ok((lo as usize, hi as usize))
}

/// `out[j] = data[start + stride * j]`, or the offending offset.
pub(super) fn gather(data: &[f32], start: i64, stride: i64, out: &mut [f32]) -> Result<(), i64> {
    if out.is_empty() {
        return Ok(());
    }
    let (lo, hi) = extent(start, stride, out.len(), data.len())?;
    let span = &data[lo..=hi];
    match stride {
        1 => out.copy_from_slice(span),
        0 => out.fill(span[0]),
        s if s > 0 => {
            for (o, x) in out.iter_mut().zip(span.iter().step_by(s as usize)) {
                *o = *x;
            }
        }
        s => {
            for (o, x) in out
                .iter_mut()
                .zip(span.iter().rev().step_by(s.unsigned_abs() as usize))
            {
                *o = *x;
            }
        }
    }
    Ok(())
}

/// `data[start + stride * j] = values[j]`, or the offending offset.
fn scatter(data: &mut [f32], start: i64, stride: i64, values: &[f32]) -> Result<(), i64> {
    if values.is_empty() {
        return Ok(());
    }
    let (lo, hi) = extent(start, stride, values.len(), data.len())?;
    let span = &mut data[lo..=hi];
    match stride {
        1 => span.copy_from_slice(values),
        // Every value lands on one element; the last write wins, as in sequential order.
        0 => span[0] = values[values.len() - 1],
        s if s > 0 => {
            for (o, x) in span.iter_mut().step_by(s as usize).zip(values) {
                *o = *x;
            }
        }
        s => {
            for (o, x) in span
                .iter_mut()
                .rev()
                .step_by(s.unsigned_abs() as usize)
                .zip(values)
            {
                *o = *x;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_reads_and_writes_in_every_direction() {
        let data: Vec<f32> = (0..10).map(|v| v as f32).collect();
        let mut out = [0.0; 3];
        for (start, stride, expected) in [
            (2, 1, [2.0, 3.0, 4.0]),
            (1, 3, [1.0, 4.0, 7.0]),
            (9, -4, [9.0, 5.0, 1.0]),
            (6, 0, [6.0, 6.0, 6.0]),
        ] {
            gather(&data, start, stride, &mut out).expect("inside");
            assert_eq!(out, expected);
            let mut written = [0.0f32; 10];
            scatter(&mut written, start, stride, &expected).expect("inside");
            for (j, v) in expected.iter().enumerate() {
                if stride != 0 {
                    assert_eq!(written[(start + stride * j as i64) as usize], *v);
                }
            }
        }
        assert_eq!(gather(&data, 8, 1, &mut out), Err(10));
        assert_eq!(gather(&data, 1, -1, &mut out), Err(-1));
    }
}
