import { isUtf8 } from "node:buffer";
import { crc32 as zlibCrc32 } from "node:zlib";
import type { EntryCodec } from "../entry/entry-codec.js";
import type { Entry } from "../entry/entry-schema.js";
import { parseWithHistory, SLICED_LINE_BYTES, SlicedParseError } from "../entry/large-entry.js";
import {
  coveredEnd,
  frameBodyEnd,
  hasFrameTail,
  type LineFormat,
  readFrame,
  unframeLine,
} from "../entry/line-frame.js";
import type { Pause } from "../entry/time-slice.js";
import { CorruptEntryError, UnsupportedFormatError } from "../errors.js";

/** Bytes checksummed (or checked for UTF-8) between two pauses when verifying a long line. */
const CRC_SLICE = 4 << 20;
const INVALID_UTF8 =
  "invalid UTF-8 (a committed line must be valid UTF-8; it would otherwise restore altered)";

/**
 * Decodes the committed lines of one segment file. The first line fixes the format: a v2 (or
 * later) `segment_start` is framed (`seq`, `crc`), a v1 one is plain JSON; every later line must
 * match. A framed line whose checksum or sequence number is wrong is corruption, so a duplicated,
 * reordered or altered line never decodes as a valid entry.
 */
export class LineDecoder<TItem> {
  version: LineFormat | undefined;
  /** The last buffer decoded from, and its memory as 32-bit words when 4-byte aligned (for `crc32`). */
  private wordsBuffer: Buffer | undefined;
  private words: Int32Array | undefined;

  constructor(
    private readonly codec: EntryCodec<TItem>,
    readonly file: string,
  ) {}

  /** True when line `[start, end)` is long enough to be decoded with `decodeLong` instead. */
  isLong(start: number, end: number): boolean {
    return end - start >= SLICED_LINE_BYTES;
  }

  /**
   * Decodes line `lineNumber` (1-based), held in bytes `[start, end)` without its newline. A v2
   * line's byte at the end of its entry is overwritten while it is decoded, and put back before
   * this returns: `buffer` must be the caller's own.
   */
  decode(buffer: Buffer, start: number, end: number, lineNumber: number): Entry<TItem> {
    const version = this.version ?? this.firstLineVersion(buffer, start, end);
    let entry: Entry<TItem>;
    if (version === 1) {
      try {
        entry = this.codec.decode(buffer.toString("utf8", start, end), this.file, lineNumber);
      } catch (error) {
        throw this.unknownKindAsCorrupt(error);
      }
    } else {
      const bodyEnd = frameBodyEnd(buffer, start, end, lineNumber - 1, this.wordsOf(buffer));
      if (bodyEnd !== -1) {
        // The entry's own JSON: everything before `,"seq":`, closed again. The `}` goes over the
        // member's `,` for the moment of the decode into text (one flat string, no concatenation
        // for the parser to copy again); the reader's buffer is its own.
        buffer[bodyEnd] = 0x7d;
        const body = buffer.toString("utf8", start, bodyEnd + 1);
        buffer[bodyEnd] = 0x2c;
        entry = this.codec.decode(body, this.file, lineNumber);
      } else {
        // Something is wrong with the frame: find out what, to say so.
        const framed = unframeLine(buffer, start, end);
        if (!framed.ok) throw this.corrupt(lineNumber, framed.reason);
        this.checkSeq(framed.seq, lineNumber);
        entry = this.codec.decode(framed.body, this.file, lineNumber);
      }
    }
    return this.version === undefined ? this.checkFirst(entry, version, lineNumber) : entry;
  }

  /**
   * `decode` for a long line (a `segment_start` carrying a long history): the checksum, the
   * parse and the validation run in slices with `pause` between them, so the event loop keeps
   * turning while a fork of a long session is restored.
   */
  async decodeLong(
    buffer: Buffer,
    start: number,
    end: number,
    lineNumber: number,
    pause: Pause,
  ): Promise<Entry<TItem>> {
    await this.assertUtf8Sliced(buffer, start, end, lineNumber, pause);
    const version = this.version ?? this.firstLineVersion(buffer, start, end);
    let bodyEnd = end;
    let tail = "";
    if (version === 2) {
      let crc = 0;
      for (let at = start; at < coveredEnd(end); at += CRC_SLICE) {
        crc = zlibCrc32(buffer.subarray(at, Math.min(at + CRC_SLICE, coveredEnd(end))), crc);
        await pause();
      }
      const frame = readFrame(buffer, start, end, crc);
      if (!frame.ok) throw this.corrupt(lineNumber, frame.reason);
      this.checkSeq(frame.seq, lineNumber);
      bodyEnd = frame.bodyEnd;
      tail = "}";
    }
    let value: unknown;
    try {
      value = await parseWithHistory(buffer, start, bodyEnd, tail, pause);
    } catch (error) {
      if (!(error instanceof SlicedParseError)) throw error;
      throw new CorruptEntryError({
        file: this.file,
        line: lineNumber,
        reason: `not valid JSON (${error.message})`,
        cause: error,
      });
    }
    const check = this.codec.checkSliced(value, this.file, lineNumber, pause);
    const entry = version === 1 ? await this.unframedAsync(check) : await check;
    return this.version === undefined ? this.checkFirst(entry, version, lineNumber) : entry;
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

  private async unframedAsync(decoding: Promise<Entry<TItem>>): Promise<Entry<TItem>> {
    try {
      return await decoding;
    } catch (error) {
      throw this.unknownKindAsCorrupt(error);
    }
  }

  /**
   * A v1 line carries no checksum, so an entry kind this package does not know may as well be
   * damage: corruption, as it always was. (A framed line with an unknown kind is intact, hence
   * from a newer writer: the codec's `UnsupportedFormatError`.)
   */
  private unknownKindAsCorrupt(error: unknown): unknown {
    if (!UnsupportedFormatError.isInstance(error) || error.kind === undefined) return error;
    return this.corrupt(
      error.line,
      `unknown entry kind ${JSON.stringify(error.kind)} in a format v1 segment`,
    );
  }

  private wordsOf(buffer: Buffer): Int32Array | undefined {
    if (buffer !== this.wordsBuffer) {
      this.wordsBuffer = buffer;
      this.words =
        buffer.byteOffset % 4 === 0
          ? new Int32Array(buffer.buffer, buffer.byteOffset, buffer.length >> 2)
          : undefined;
    }
    return this.words;
  }

  private checkSeq(seq: number, lineNumber: number): void {
    if (seq !== lineNumber - 1) {
      throw this.corrupt(
        lineNumber,
        `it carries sequence number ${seq} where ${lineNumber - 1} belongs (a duplicated, reordered or misplaced line)`,
      );
    }
  }

  /** The format the first line is written in: framed lines are v2 or later. */
  private firstLineVersion(buffer: Buffer, start: number, end: number): LineFormat {
    return hasFrameTail(buffer, start, end) ? 2 : 1;
  }

  /** The first line's `segment_start` must say the version its framing implies. */
  private checkFirst(entry: Entry<TItem>, version: LineFormat, lineNumber: number): Entry<TItem> {
    if (entry.kind === "segment_start") {
      if (version === 1 && entry.v !== 1) {
        throw this.corrupt(
          lineNumber,
          `a format v${entry.v} segment_start must end with its "seq" and "crc"`,
        );
      }
      if (version === 2 && entry.v === 1) {
        throw this.corrupt(lineNumber, 'a format v1 segment_start cannot carry "seq" and "crc"');
      }
    }
    this.version = version;
    return entry;
  }

  /** `assertUtf8` of one long line, a few megabytes at a time between pauses. */
  private async assertUtf8Sliced(
    buffer: Buffer,
    start: number,
    end: number,
    lineNumber: number,
    pause: Pause,
  ) {
    for (let at = start; at < end; ) {
      let to = Math.min(end, at + CRC_SLICE);
      // Cut before a lead byte, never inside a multi-byte sequence (continuations are 10xxxxxx).
      while (to < end && to > at && ((buffer[to] as number) & 0xc0) === 0x80) to--;
      if (!isUtf8(buffer.subarray(at, to))) throw this.corrupt(lineNumber, INVALID_UTF8);
      at = to;
      await pause();
    }
  }

  /** Throws for the first line of `[start, end)` that is not valid UTF-8 (lines start at `firstLine`). */
  assertUtf8(buffer: Buffer, start: number, end: number, firstLine: number): void {
    if (isUtf8(buffer.subarray(start, end))) return;
    let lineStart = start;
    for (let line = firstLine; lineStart < end; line++) {
      const newline = buffer.indexOf(0x0a, lineStart);
      const lineEnd = newline === -1 || newline > end ? end : newline;
      if (!isUtf8(buffer.subarray(lineStart, lineEnd))) {
        throw this.corrupt(line, INVALID_UTF8);
      }
      lineStart = lineEnd + 1;
    }
  }

  corrupt(line: number, reason: string): CorruptEntryError {
    return new CorruptEntryError({ file: this.file, line, reason });
  }
}
