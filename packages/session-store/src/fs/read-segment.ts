import { isUtf8 } from "node:buffer";
import { type FileHandle, open } from "node:fs/promises";
import type { EntryCodec } from "../entry/entry-codec.js";
import type { Entry } from "../entry/entry-schema.js";
import { hasFrameTail, type LineFormat } from "../entry/line-frame.js";
import { timeSlicer } from "../entry/time-slice.js";
import { LineDecoder } from "./line-decoder.js";
import type { LinePosition, ReadStart } from "./segment-positions.js";

const NEWLINE = 0x0a;
const CHUNK = 1 << 20;
/** Bytes of a skipped line kept while skipping it: enough to see its v2 frame tail. */
const TAIL_KEEP = 64;

/** How `readSegmentFrom` reads. */
export interface SegmentReadOptions {
  /** Index of the first entry wanted (0 = the `segment_start`). */
  from: number;
  /** Where to start, given the file's inode and size once it is open (a line start at or before `from`). */
  startAt(ino: number, size: number): ReadStart;
  /** Reports line starts seen (at read chunk boundaries and the committed end). */
  onPosition?(ino: number, version: LineFormat | undefined, position: LinePosition): void;
  signal?: AbortSignal;
}

/**
 * Streams the committed entries of a segment file at index `from` and after, one batch per read
 * chunk. Only newline-terminated lines are entries; an unterminated last line is a torn write and
 * is ignored. Splitting on the newline byte is safe for UTF-8 (0x0A never occurs inside a
 * multi-byte sequence). Lines before `from` are counted, not decoded. A committed line that is
 * not valid UTF-8, fails its v2 checksum or sequence number, or does not decode throws
 * `CorruptEntryError` with its 1-based line number. A long line (a `segment_start` holding a
 * long history) is decoded in slices that yield to the event loop.
 */
export async function* readSegmentFrom<TItem>(
  file: string,
  codec: EntryCodec<TItem>,
  options: SegmentReadOptions,
): AsyncGenerator<Entry<TItem>[]> {
  const { from, signal } = options;
  const handle = await open(file, "r");
  const decoder = new LineDecoder(codec, file);
  const pause = timeSlicer(signal);
  try {
    const { ino, size } = await handle.stat();
    const start = options.startAt(ino, size);
    let version = start.version;
    if (version !== undefined) decoder.version = version;
    let buffer = Buffer.allocUnsafe(CHUNK);
    let filled = 0;
    /** File offset of `buffer[0]`, and the index of the line that starts there. */
    let position = start.offset;
    let index = start.index;
    for (;;) {
      signal?.throwIfAborted();
      if (filled === buffer.length) {
        if (index < from) {
          // A long line that is only skipped: keep its last bytes (its frame tail), not all of it.
          buffer.copy(buffer, 0, filled - TAIL_KEEP, filled);
          position += filled - TAIL_KEEP;
          filled = TAIL_KEEP;
        } else {
          // A line longer than the buffer: grow instead of splitting it — at once to what is
          // left of the file, so a long line is copied once, not at every doubling.
          const bigger = Buffer.allocUnsafe(Math.max(buffer.length * 2, size - position + 1));
          buffer.copy(bigger, 0, 0, filled);
          buffer = bigger;
        }
      }
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      const lastNewline = buffer.lastIndexOf(NEWLINE, filled - 1);
      if (lastNewline === -1) continue;
      let lineStart = 0;
      for (; index < from && lineStart <= lastNewline; index++) {
        const end = buffer.indexOf(NEWLINE, lineStart);
        if (index === 0 && version === undefined) {
          version = hasFrameTail(buffer, lineStart, end) ? 2 : 1;
          decoder.version = version;
        }
        lineStart = end + 1;
      }
      const batch: Entry<TItem>[] = [];
      try {
        if (lineStart <= lastNewline) {
          // One UTF-8 check for a chunk of short lines; a long line (or a chunk that fails the
          // check) is checked line by line, so the lines before a bad one are still entries.
          const eachLine =
            decoder.isLong(lineStart, lastNewline) || !isUtf8(buffer.subarray(lineStart, lastNewline));
          for (; lineStart <= lastNewline; index++) {
            if ((index & 255) === 0) await pause();
            const end = buffer.indexOf(NEWLINE, lineStart);
            if (decoder.isLong(lineStart, end)) {
              batch.push(await decoder.decodeLong(buffer, lineStart, end, index + 1, pause));
            } else {
              if (eachLine) decoder.assertUtf8(buffer, lineStart, end, index + 1);
              batch.push(decoder.decode(buffer, lineStart, end, index + 1));
            }
            lineStart = end + 1;
          }
          version = decoder.version;
        }
      } catch (error) {
        // The entries before a corrupt line are still committed entries: hand them out first.
        if (batch.length > 0) yield batch;
        throw error;
      }
      buffer.copy(buffer, 0, lastNewline + 1, filled);
      position += lastNewline + 1;
      filled -= lastNewline + 1;
      options.onPosition?.(ino, version, { index, offset: position });
      if (batch.length > 0) yield batch;
      await pause();
    }
  } finally {
    await handle.close();
  }
}

/** The first and last committed entries of a segment and how many it holds. */
export interface SegmentEnds<TItem> {
  first: Entry<TItem>;
  last: Entry<TItem>;
  count: number;
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await handle.read(buffer, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buffer.subarray(0, got);
}

/**
 * Reads only the first line and the last committed line of a segment file (for listing a
 * session's branches without reading every segment). A v2 last line tells the entry count by
 * its verified sequence number; a v1 file is counted. Returns null for a file with no
 * committed line.
 */
export async function readSegmentEnds<TItem>(
  file: string,
  codec: EntryCodec<TItem>,
): Promise<SegmentEnds<TItem> | null> {
  const handle = await open(file, "r");
  const decoder = new LineDecoder(codec, file);
  try {
    const { size } = await handle.stat();
    // The last committed line: search backwards for the final newline and the one before it.
    let window = Math.min(size, 64 * 1024);
    let committedEnd: number;
    let lastStart: number;
    for (;;) {
      const offset = size - window;
      const tail = await readAt(handle, offset, window);
      const last = tail.lastIndexOf(NEWLINE);
      if (last !== -1) {
        const previous = last === 0 ? -1 : tail.lastIndexOf(NEWLINE, last - 1);
        if (previous !== -1 || offset === 0) {
          committedEnd = offset + last + 1;
          lastStart = previous === -1 ? 0 : offset + previous + 1;
          break;
        }
      } else if (offset === 0) {
        return null;
      }
      window = Math.min(size, window * 4);
    }
    let first: Entry<TItem>;
    if (lastStart === 0) {
      const bytes = await readAt(handle, 0, committedEnd - 1);
      first = await decodeWhole(decoder, bytes, 1);
      return { first, last: first, count: 1 };
    }
    first = await readFirstLine(handle, decoder);
    const lastBytes = await readAt(handle, lastStart, committedEnd - 1 - lastStart);
    const unplaced = isUtf8(lastBytes) ? decoder.decodeUnplaced(lastBytes, 0, lastBytes.length) : null;
    if (unplaced !== null) return { first, last: unplaced.entry, count: unplaced.seq + 1 };
    // v1, or a damaged last line: count the lines so the entry (or its error) has its number.
    const count = await countLines(handle, committedEnd);
    decoder.assertUtf8(lastBytes, 0, lastBytes.length, count);
    return { first, last: decoder.decode(lastBytes, 0, lastBytes.length, count), count };
  } finally {
    await handle.close();
  }
}

/** Decodes `bytes` (one line without its newline), in slices when it is long. */
async function decodeWhole<TItem>(decoder: LineDecoder<TItem>, bytes: Buffer, lineNumber: number) {
  if (decoder.isLong(0, bytes.length))
    return decoder.decodeLong(bytes, 0, bytes.length, lineNumber, timeSlicer());
  decoder.assertUtf8(bytes, 0, bytes.length, lineNumber);
  return decoder.decode(bytes, 0, bytes.length, lineNumber);
}

async function readFirstLine<TItem>(handle: FileHandle, decoder: LineDecoder<TItem>): Promise<Entry<TItem>> {
  let buffer = Buffer.allocUnsafe(64 * 1024);
  let filled = 0;
  for (;;) {
    if (filled === buffer.length) {
      const bigger = Buffer.allocUnsafe(buffer.length * 4);
      buffer.copy(bigger, 0, 0, filled);
      buffer = bigger;
    }
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
    const newline = buffer.indexOf(NEWLINE, filled);
    filled += bytesRead;
    if (newline !== -1 && newline < filled) return decodeWhole(decoder, buffer.subarray(0, newline), 1);
    if (bytesRead === 0) throw decoder.corrupt(1, "the first line has no newline");
  }
}

async function countLines(handle: FileHandle, end: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  let count = 0;
  for (let position = 0; position < end; ) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, end - position), position);
    if (bytesRead === 0) break;
    for (
      let at = buffer.indexOf(NEWLINE, 0);
      at !== -1 && at < bytesRead;
      at = buffer.indexOf(NEWLINE, at + 1)
    )
      count++;
    position += bytesRead;
  }
  return count;
}
