import { isUtf8 } from "node:buffer";
import { type FileHandle, open } from "node:fs/promises";
import type { EntryCodec } from "../entry/entry-codec.js";
import type { Entry, FormatVersion } from "../entry/entry-schema.js";
import { LineDecoder } from "./line-decoder.js";

const NEWLINE = 0x0a;
const CHUNK = 1 << 20;

/** What a complete read learned about the file, so a writer can skip re-scanning it. */
export interface ReadSummary {
  ino: number;
  committedSize: number;
  count: number;
  version: FormatVersion | undefined;
}

/**
 * Streams the committed entries of a segment file in chunks. Only newline-terminated lines are
 * entries; an unterminated last line is a torn write and is ignored. Splitting on the newline
 * byte is safe for UTF-8 (0x0A never occurs inside a multi-byte sequence). A committed line that
 * is not valid UTF-8, fails its v2 checksum or sequence number, or does not decode throws
 * `CorruptEntryError` with its 1-based line number.
 */
export async function* readSegmentFile<TItem>(
  file: string,
  codec: EntryCodec<TItem>,
  onComplete?: (summary: ReadSummary) => void,
): AsyncGenerator<Entry<TItem>> {
  for await (const batch of readSegmentBatches(file, codec, onComplete)) yield* batch;
}

/** `readSegmentFile` one read chunk at a time: the entries of each chunk's complete lines. */
export async function* readSegmentBatches<TItem>(
  file: string,
  codec: EntryCodec<TItem>,
  onComplete?: (summary: ReadSummary) => void,
): AsyncGenerator<Entry<TItem>[]> {
  const handle = await open(file, "r");
  const decoder = new LineDecoder(codec, file);
  try {
    const { ino } = await handle.stat();
    let buffer = Buffer.allocUnsafe(CHUNK);
    let filled = 0;
    let consumed = 0;
    let lineNumber = 0;
    for (;;) {
      if (filled === buffer.length) {
        // A line longer than the buffer: grow instead of splitting it.
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, filled);
        buffer = bigger;
      }
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, consumed + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      const lastNewline = buffer.lastIndexOf(NEWLINE, filled - 1);
      if (lastNewline === -1) continue;
      decoder.assertUtf8(buffer, 0, lastNewline, lineNumber + 1);
      const batch: Entry<TItem>[] = [];
      let start = 0;
      while (start <= lastNewline) {
        const end = buffer.indexOf(NEWLINE, start);
        lineNumber++;
        batch.push(decoder.decode(buffer, start, end, lineNumber));
        start = end + 1;
      }
      yield batch;
      buffer.copy(buffer, 0, lastNewline + 1, filled);
      consumed += lastNewline + 1;
      filled -= lastNewline + 1;
    }
    onComplete?.({ ino, committedSize: consumed, count: lineNumber, version: decoder.version });
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
      decoder.assertUtf8(bytes, 0, bytes.length, 1);
      first = decoder.decode(bytes, 0, bytes.length, 1);
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
    if (newline !== -1 && newline < filled) {
      decoder.assertUtf8(buffer, 0, newline, 1);
      return decoder.decode(buffer, 0, newline, 1);
    }
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
