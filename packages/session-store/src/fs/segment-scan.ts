import type { SyncFs } from "./sync-fs.js";

const NEWLINE = 0x0a;
const CHUNK = 1 << 20;

/** Committed lines found in a byte range of a segment file. */
export interface ScanResult {
  /** Lines counted so far (the `startCount` passed in plus the newlines found). */
  count: number;
  /** Offset just past the last newline found (or `from` if none): the committed length. */
  committedSize: number;
}

/**
 * Counts newline-terminated lines in `[from, to)` of an open file. With `stopAtCount`, stops at
 * the newline that completes line number `stopAtCount` (used to find where to cut a segment).
 */
export function scanLines(
  fs: SyncFs,
  fd: number,
  range: { from: number; to: number; startCount: number; stopAtCount?: number },
): ScanResult {
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, range.to - range.from)));
  let count = range.startCount;
  let committedSize = range.from;
  let position = range.from;
  while (position < range.to) {
    const n = fs.readSync(fd, buffer, 0, Math.min(buffer.length, range.to - position), position);
    if (n === 0) break;
    let at = buffer.indexOf(NEWLINE, 0);
    while (at !== -1 && at < n) {
      count++;
      committedSize = position + at + 1;
      if (count === range.stopAtCount) return { count, committedSize };
      at = buffer.indexOf(NEWLINE, at + 1);
    }
    position += n;
  }
  return { count, committedSize };
}
