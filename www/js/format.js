// Numbers as the page writes them: durations and byte counts. Pure (no DOM), so that
// tests/js/ runs it under node.

/** `1.23 ms`, `45 µs`, `2.1 s`; `—` for a time that is not a finite number. */
export function formatMs(ms) {
  if (!Number.isFinite(ms)) return "—";
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  if (ms >= 0.1) return `${ms.toFixed(2)} ms`;
  return `${Math.round(ms * 1000)} µs`;
}

/** `1.50 MiB`, `12.0 KiB`, `640 B`; `—` for a size that is not a finite number. */
export function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return "—";
  if (bytes >= 1 << 20) return `${(bytes / (1 << 20)).toFixed(2)} MiB`;
  if (bytes >= 1 << 10) return `${(bytes / (1 << 10)).toFixed(1)} KiB`;
  return `${bytes} B`;
}
