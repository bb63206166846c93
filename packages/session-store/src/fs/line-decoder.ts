import { isUtf8 } from "node:buffer";
import type { EntryCodec } from "../entry/entry-codec.js";
import type { Entry, FormatVersion } from "../entry/entry-schema.js";
import { hasFrameTail, unframeLine } from "../entry/line-frame.js";
import { CorruptEntryError } from "../errors.js";

/**
 * Decodes the committed lines of one segment file. The first line fixes the format: a v2
 * `segment_start` is framed (`seq`, `crc`), a v1 one is plain JSON; every later line must
 * match. A v2 line whose checksum or sequence number is wrong is corruption, so a duplicated,
 * reordered or altered line never decodes as a valid entry.
 */
export class LineDecoder<TItem> {
  version: FormatVersion | undefined;

  constructor(
    private readonly codec: EntryCodec<TItem>,
    readonly file: string,
  ) {}

  /** Decodes line `lineNumber` (1-based), held in bytes `[start, end)` without its newline. */
  decode(buffer: Buffer, start: number, end: number, lineNumber: number): Entry<TItem> {
    if (this.version === undefined) return this.decodeFirst(buffer, start, end, lineNumber);
    if (this.version === 1)
      return this.codec.decode(buffer.toString("utf8", start, end), this.file, lineNumber);
    const framed = unframeLine(buffer, start, end);
    if (!framed.ok) throw this.corrupt(lineNumber, framed.reason);
    if (framed.seq !== lineNumber - 1) {
      throw this.corrupt(
        lineNumber,
        `it carries sequence number ${framed.seq} where ${lineNumber - 1} belongs (a duplicated, reordered or misplaced line)`,
      );
    }
    return this.codec.decode(framed.body, this.file, lineNumber);
  }

  /**
   * Decodes a v2 line whose position is not known (the last line, read from the end of the
   * file): its checksum is verified and the sequence number it carries is returned.
   */
  decodeUnplaced(buffer: Buffer, start: number, end: number): { entry: Entry<TItem>; seq: number } | null {
    if (this.version !== 2) return null;
    const framed = unframeLine(buffer, start, end);
    if (!framed.ok) return null;
    return { entry: this.codec.decode(framed.body, this.file, framed.seq + 1), seq: framed.seq };
  }

  private decodeFirst(buffer: Buffer, start: number, end: number, lineNumber: number): Entry<TItem> {
    if (!hasFrameTail(buffer, start, end)) {
      const entry = this.codec.decode(buffer.toString("utf8", start, end), this.file, lineNumber);
      if (entry.kind === "segment_start" && entry.v !== 1) {
        throw this.corrupt(
          lineNumber,
          `a format v${entry.v} segment_start must end with its "seq" and "crc"`,
        );
      }
      this.version = 1;
      return entry;
    }
    this.version = 2;
    const entry = this.decode(buffer, start, end, lineNumber);
    if (entry.kind === "segment_start" && entry.v === 1) {
      throw this.corrupt(lineNumber, 'a format v1 segment_start cannot carry "seq" and "crc"');
    }
    return entry;
  }

  /** Throws for the first line of `[start, end)` that is not valid UTF-8 (lines start at `firstLine`). */
  assertUtf8(buffer: Buffer, start: number, end: number, firstLine: number): void {
    if (isUtf8(buffer.subarray(start, end))) return;
    let lineStart = start;
    for (let line = firstLine; lineStart < end; line++) {
      const newline = buffer.indexOf(0x0a, lineStart);
      const lineEnd = newline === -1 || newline > end ? end : newline;
      if (!isUtf8(buffer.subarray(lineStart, lineEnd))) {
        throw this.corrupt(
          line,
          "invalid UTF-8 (a committed line must be valid UTF-8; it would otherwise restore altered)",
        );
      }
      lineStart = lineEnd + 1;
    }
  }

  corrupt(line: number, reason: string): CorruptEntryError {
    return new CorruptEntryError({ file: this.file, line, reason });
  }
}
