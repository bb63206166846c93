import { open } from "node:fs/promises";
import type { EntryCodec } from "../entry/entry-codec.js";
import type { Entry } from "../entry/entry-schema.js";

const NEWLINE = 0x0a;
const CHUNK = 1 << 20;

/** What a complete read learned about the file, so a writer can skip re-scanning it. */
export interface ReadSummary {
  ino: number;
  committedSize: number;
  count: number;
}

/**
 * Streams the committed entries of a segment file in chunks. Only newline-terminated lines are
 * entries; an unterminated last line is a torn write and is ignored. Splitting on the newline
 * byte is safe for UTF-8 (0x0A never occurs inside a multi-byte sequence). A committed line that
 * does not decode throws `CorruptEntryError` with its 1-based line number.
 */
export async function* readSegmentFile<TItem>(
  file: string,
  codec: EntryCodec<TItem>,
  onComplete?: (summary: ReadSummary) => void,
): AsyncGenerator<Entry<TItem>> {
  const handle = await open(file, "r");
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
      const lines = buffer.toString("utf8", 0, lastNewline).split("\n");
      for (const line of lines) {
        lineNumber++;
        yield codec.decode(line, file, lineNumber);
      }
      const rest = filled - (lastNewline + 1);
      buffer.copy(buffer, 0, lastNewline + 1, filled);
      consumed += lastNewline + 1;
      filled = rest;
    }
    onComplete?.({ ino, committedSize: consumed, count: lineNumber });
  } finally {
    await handle.close();
  }
}
