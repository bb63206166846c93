import { fstatSync, readSync } from "node:fs";
import type { Scratch, SkipReason } from "./checked-open.js";
import type { LineMatcher } from "./line-matcher.js";
import type { MatchLines } from "./match-lines.js";
import { looksBinary, MAX_FILE_BYTES } from "./text.js";

/** Longest stretch of synchronous work before a search yields to the event loop. */
const SLICE_MS = 10;

/**
 * The search's clock: `due()` once `SLICE_MS` of synchronous work have passed, `yield()` lets the
 * event loop run (and an abort through) and starts the next slice.
 */
export class Pace {
  private sliceStart = performance.now();

  constructor(private readonly signal: AbortSignal | undefined) {}

  due(): boolean {
    return performance.now() - this.sliceStart > SLICE_MS;
  }

  async yield(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.signal?.throwIfAborted();
    this.sliceStart = performance.now();
  }
}

/** How searching one file ended: read through, stopped by the sink, or why it was skipped. */
export type FileOutcome = "searched" | "stopped" | SkipReason;

/** Bytes read per step of a file larger than the first read: decoding and matching one takes a few ms. */
const CHUNK_BYTES = 256 * 1024;

/**
 * Searches the open file `fd` line by line into `lines`. The first read fills at most the
 * scratch buffer (64 KiB): a NUL byte in it marks the file binary, and a shorter read is the
 * whole file (for a regular file POSIX allows a short read only at its end), searched at once.
 * A larger file goes by chunks of complete lines, yielding between chunks when the slice is
 * spent, so even a 16 MiB file never stalls the event loop for long; one over `MAX_FILE_BYTES`
 * is "too-big". A small file is searched synchronously (the outcome itself, not a promise: an
 * await per file is measurable over thousands of files). Throws (or rejects) for an abort, and
 * a read's errno error.
 */
export function searchOpenFile(
  fd: number,
  matcher: LineMatcher,
  lines: MatchLines,
  scratch: Scratch,
  pace: Pace,
): FileOutcome | Promise<FileOutcome> {
  const first = readSync(fd, scratch.buffer, 0, scratch.buffer.length, null);
  const head = scratch.buffer.subarray(0, first);
  if (looksBinary(head)) return "binary";
  if (first < scratch.buffer.length) {
    const text = matcher.candidate(head);
    return text === undefined || lines.text(text) ? "searched" : "stopped";
  }
  return searchLargeFile(fd, head, matcher, lines, scratch, pace);
}

/** The rest of `searchOpenFile` for a file whose first read filled the buffer (`head`). */
async function searchLargeFile(
  fd: number,
  head: Buffer,
  matcher: LineMatcher,
  lines: MatchLines,
  scratch: Scratch,
  pace: Pace,
): Promise<FileOutcome> {
  const first = head.length;
  const stat = fstatSync(fd);
  if (!stat.isFile()) return "not-regular";
  if (stat.size > MAX_FILE_BYTES) return "too-big";
  scratch.chunk ??= Buffer.allocUnsafe(CHUNK_BYTES + scratch.buffer.length);
  let work = scratch.chunk;
  head.copy(work);
  let filled = first;
  let total = first;
  let end = false;
  for (;;) {
    // Everything up to the last newline is complete lines; the rest waits for the next read.
    const lastNewline = filled === 0 ? -1 : work.lastIndexOf(10, filled - 1);
    if (lastNewline >= 0) {
      if (!feed(work.subarray(0, lastNewline + 1), matcher, lines)) return "stopped";
      work.copyWithin(0, lastNewline + 1, filled);
      filled -= lastNewline + 1;
    }
    if (end) break;
    if (pace.due()) await pace.yield();
    if (work.length - filled < CHUNK_BYTES) {
      // A line longer than the buffer: grow it (the size bound above still holds).
      const bigger = Buffer.allocUnsafe(filled + CHUNK_BYTES);
      work.copy(bigger, 0, 0, filled);
      work = scratch.chunk = bigger;
    }
    const wanted = work.length - filled;
    const n = readSync(fd, work, filled, wanted, null);
    filled += n;
    total += n;
    // A file that grew past the bound since the fstat is searched up to it.
    end = n < wanted || total >= MAX_FILE_BYTES;
  }
  // The last line, without a newline.
  return filled === 0 || feed(work.subarray(0, filled), matcher, lines) ? "searched" : "stopped";
}

/** One block of complete lines into `lines`: decoded only when it may match or context is shown. */
function feed(block: Buffer, matcher: LineMatcher, lines: MatchLines): boolean {
  const text = matcher.candidate(block);
  if (text !== undefined) return lines.text(text);
  if (!lines.showsContext) {
    lines.skip(countNewlines(block));
    return true;
  }
  return lines.text(block.toString("utf8"));
}

function countNewlines(block: Buffer): number {
  let count = 0;
  for (let at = block.indexOf(10); at !== -1; at = block.indexOf(10, at + 1)) count++;
  return count;
}
