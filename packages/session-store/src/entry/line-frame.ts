import { crc32 as zlibCrc32 } from "node:zlib";
import { crc32 } from "./crc32.js";

// A v2 line is the entry's JSON with two members added at its end, so it stays one JSON object
// per line (jq, grep and head keep working) and the entry's own bytes stay exactly as serialized:
//   {"kind":"user_input","ts":5,"text":"hi","seq":3,"crc":"1c291ca3"}
// `seq` is the line's 0-based index in its segment (segment_start is 0); `crc` is the CRC-32
// (zlib's, lowercase hex) of the UTF-8 bytes before `,"crc":`, so it covers `seq` as well.
const SEQ_MEMBER = ',"seq":';

/**
 * How a segment file's lines are written: 1 plain JSON (format v1), 2 framed with `seq` and
 * `crc` (format v2 and every later version: v3 changed what entries may say, not the framing).
 */
export type LineFormat = 1 | 2;

/** The line format of a segment whose `segment_start` says format version `v`. */
export function lineFormatOf(v: number): LineFormat {
  return v === 1 ? 1 : 2;
}
const SEQ_MEMBER_BYTES = Buffer.from(SEQ_MEMBER, "latin1");
const CRC_OPEN = Buffer.from(',"crc":"', "latin1");
const CRC_CLOSE = Buffer.from('"}', "latin1");
/** Length of `,"crc":"xxxxxxxx"}`, the fixed tail of every v2 line. */
export const CRC_TAIL_LENGTH = CRC_OPEN.length + 8 + CRC_CLOSE.length;

function hex8(value: number): string {
  return value.toString(16).padStart(8, "0");
}

/** Frames one serialized entry (`{…}`, no newline) as line number `seq` of a v2 segment. */
export function frameLine(body: string, seq: number): string {
  const covered = `${body.slice(0, -1)}${SEQ_MEMBER}${seq}`;
  return `${covered},"crc":"${hex8(zlibCrc32(covered))}"}`;
}

const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");

function writeHex8(out: Buffer, at: number, value: number): void {
  let crc = value;
  for (let d = 7; d >= 0; d--, crc >>>= 4) out[at + d] = HEX_DIGITS[crc & 0xf] as number;
}

/** A growable byte buffer reused by every append of a store (appends are synchronous). */
export class FrameBuffer {
  bytes: Buffer;
  /** The same memory as 32-bit words, for the checksum loop (see `crc32`). */
  words: Int32Array;

  constructor() {
    [this.bytes, this.words] = FrameBuffer.allocate(64 * 1024);
  }

  ensure(length: number): Buffer {
    if (this.bytes.length < length) {
      [this.bytes, this.words] = FrameBuffer.allocate(Math.max(length, this.bytes.length * 2));
    }
    return this.bytes;
  }

  private static allocate(length: number): [Buffer, Int32Array] {
    const memory = new ArrayBuffer(Math.ceil(length / 4) * 4);
    return [Buffer.from(memory), new Int32Array(memory)];
  }
}

/**
 * Writes consecutive v2 lines (newlines included) for serialized entries starting at sequence
 * number `firstSeq` into `into`, and returns their length — the append path's form of
 * `frameLine`, encoding each body straight into the reused buffer and computing its checksum
 * over the bytes written, without building the line as a string first.
 */
export function frameInto(into: FrameBuffer, bodies: readonly string[], firstSeq: number): number {
  let worst = 0;
  for (const body of bodies) worst += body.length * 3 + 48;
  const out = into.ensure(worst);
  let at = 0;
  for (let i = 0; i < bodies.length; i++) {
    const body = bodies[i] as string;
    const start = at;
    // The body's closing brace is overwritten by the frame, which closes the object again. The
    // body is the only native call per line: the frame's few bytes are put in place here.
    at += out.write(body, at, "utf8") - 1;
    at = putBytes(out, at, SEQ_MEMBER_BYTES);
    at = putDecimal(out, at, firstSeq + i);
    const crc = crc32(out, start, at, into.words);
    at = putBytes(out, at, CRC_OPEN);
    writeHex8(out, at, crc);
    at += 8;
    out[at++] = 0x22; // "
    out[at++] = 0x7d; // }
    out[at++] = 0x0a;
  }
  return at;
}

function putBytes(out: Buffer, at: number, bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) out[at + i] = bytes[i] as number;
  return at + bytes.length;
}

/** Writes the decimal digits of a non-negative integer at `at`; returns the offset after them. */
function putDecimal(out: Buffer, at: number, value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let rest = value;
  for (let d = digits - 1; d >= 0; d--, rest = Math.floor(rest / 10)) out[at + d] = 0x30 + (rest % 10);
  return at + digits;
}

/**
 * The bytes of one v2 line (newline included) whose serialized entry is the concatenation of
 * `parts` — a long `segment_start` serialized in slices — encoded and checksummed part by part,
 * so no part of the work is proportional to the whole line at once.
 */
export function* frameParts(parts: readonly string[], seq: number): Iterable<Buffer> {
  let crc = 0;
  let pending = "";
  for (let i = 0; i < parts.length; i++) {
    let part = parts[i] as string;
    if (i === parts.length - 1) part = part.slice(0, -1);
    pending += part;
    // Batch small parts into chunks of about 64 Ki characters before encoding them.
    if (pending.length < 64 * 1024 && i < parts.length - 1) continue;
    const bytes = Buffer.from(pending, "utf8");
    crc = zlibCrc32(bytes, crc);
    pending = "";
    yield bytes;
  }
  const seqBytes = Buffer.from(`${SEQ_MEMBER}${seq}`, "latin1");
  crc = zlibCrc32(seqBytes, crc);
  const tail = Buffer.allocUnsafe(seqBytes.length + CRC_TAIL_LENGTH + 1);
  seqBytes.copy(tail, 0);
  CRC_OPEN.copy(tail, seqBytes.length);
  writeHex8(tail, seqBytes.length + CRC_OPEN.length, crc);
  CRC_CLOSE.copy(tail, seqBytes.length + CRC_OPEN.length + 8);
  tail[tail.length - 1] = 0x0a;
  yield tail;
}

/** True when bytes `[start, end)` end like a v2 line (the checksum is not verified here). */
export function hasFrameTail(buffer: Buffer, start: number, end: number): boolean {
  const tail = end - CRC_TAIL_LENGTH;
  if (tail <= start || buffer[end - 1] !== 0x7d || buffer[end - 2] !== 0x22) return false;
  for (let i = 0; i < CRC_OPEN.length; i++) if (buffer[tail + i] !== CRC_OPEN[i]) return false;
  return true;
}

/** The value of 8 lowercase hex digits at `at`, or -1 if any byte is not one. */
function readHex8(buffer: Buffer, at: number): number {
  let value = 0;
  for (let i = at; i < at + 8; i++) {
    const byte = buffer[i] as number;
    // Strict lowercase: an upper-case digit would be the same number written by someone else.
    const digit =
      byte >= 0x30 && byte <= 0x39 ? byte - 0x30 : byte >= 0x61 && byte <= 0x66 ? byte - 0x57 : -1;
    if (digit === -1) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** Where a verified v2 frame puts the entry: its sequence number and where its own JSON ends. */
export type Frame = { ok: true; seq: number; bodyEnd: number } | { ok: false; reason: string };

/** Offset of the stored checksum's first hex digit in the v2 line `[start, end)` (frame tail present). */
function crcDigitsAt(end: number): number {
  return end - CRC_TAIL_LENGTH + CRC_OPEN.length;
}

/** The checksum a v2 line covers: bytes `[start, end - CRC_TAIL_LENGTH)`. */
export function coveredEnd(end: number): number {
  return end - CRC_TAIL_LENGTH;
}

/**
 * Checks the frame of the v2 line in bytes `[start, end)` (no newline): the tail is present, the
 * stored checksum is 8 lowercase hex digits equal to `crc` (the CRC-32 of the covered bytes,
 * computed here unless the caller already did, in slices, for a long line), and the `seq` member
 * is well formed. The bytes must already be known to be valid UTF-8.
 */
export function readFrame(buffer: Buffer, start: number, end: number, crc?: number): Frame {
  if (!hasFrameTail(buffer, start, end)) {
    return { ok: false, reason: 'no `"seq"`/`"crc"` frame at the end of the line (format v2 requires one)' };
  }
  const covered = coveredEnd(end);
  const stored = readHex8(buffer, crcDigitsAt(end));
  if (stored === -1) {
    const text = buffer.toString("latin1", crcDigitsAt(end), end - CRC_CLOSE.length);
    return { ok: false, reason: `checksum ${JSON.stringify(text)} is not 8 lowercase hex digits` };
  }
  const actual = crc ?? crc32(buffer, start, covered);
  if (actual !== stored) {
    return {
      ok: false,
      reason: `checksum mismatch (stored ${hex8(stored)}, bytes give ${hex8(actual)}): the line changed after it was written`,
    };
  }
  // `,"seq":<digits>` ends the covered bytes; read the digits backwards.
  let seq = 0;
  let scale = 1;
  let at = covered - 1;
  for (; at > start && (buffer[at] as number) >= 0x30 && (buffer[at] as number) <= 0x39; at--) {
    seq += ((buffer[at] as number) - 0x30) * scale;
    scale *= 10;
  }
  const digits = covered - 1 - at;
  const memberAt = at + 1 - SEQ_MEMBER_BYTES.length;
  if (
    digits === 0 ||
    digits > 15 ||
    (digits > 1 && buffer[at + 1] === 0x30) ||
    memberAt <= start ||
    buffer.compare(SEQ_MEMBER_BYTES, 0, SEQ_MEMBER_BYTES.length, memberAt, at + 1) !== 0
  ) {
    return { ok: false, reason: 'malformed "seq" member' };
  }
  return { ok: true, seq, bodyEnd: memberAt };
}

/**
 * The read path's check of a v2 line in bytes `[start, end)` (no newline, valid UTF-8): where
 * the entry's own JSON ends when the frame is intact and carries sequence number `seq`, else -1
 * (`readFrame` then says what is wrong). The same checks as `readFrame`, without building a
 * result per line; `words` is `buffer`'s memory as 32-bit words when it starts 4-byte aligned
 * (see `crc32`).
 */
export function frameBodyEnd(
  buffer: Buffer,
  start: number,
  end: number,
  seq: number,
  words?: Int32Array,
): number {
  if (!hasFrameTail(buffer, start, end)) return -1;
  const covered = coveredEnd(end);
  const stored = readHex8(buffer, crcDigitsAt(end));
  if (stored === -1 || crc32(buffer, start, covered, words) !== stored) return -1;
  // `,"seq":<digits>` ends the covered bytes: the digits must spell `seq` exactly.
  let at = covered - 1;
  let rest = seq;
  do {
    if (at <= start || buffer[at] !== 0x30 + (rest % 10)) return -1;
    rest = Math.floor(rest / 10);
    at--;
  } while (rest > 0);
  // No digit may come before them: the member's `:` must.
  const memberAt = at + 1 - SEQ_MEMBER_BYTES.length;
  if (memberAt <= start) return -1;
  for (let i = 0; i < SEQ_MEMBER_BYTES.length; i++) {
    if (buffer[memberAt + i] !== SEQ_MEMBER_BYTES[i]) return -1;
  }
  return memberAt;
}

/** A v2 line taken apart: the entry's JSON as written and the sequence number it carries. */
export type Unframed = { ok: true; body: string; seq: number } | { ok: false; reason: string };

/**
 * Checks and strips the frame of the v2 line in bytes `[start, end)` (no newline). The bytes
 * must already be known to be valid UTF-8. Fails with a reason when the tail is missing, the
 * checksum does not match the bytes, or the `seq` member is malformed.
 */
export function unframeLine(buffer: Buffer, start: number, end: number): Unframed {
  const frame = readFrame(buffer, start, end);
  if (!frame.ok) return frame;
  // The entry's own JSON: everything before `,"seq":`, closed again.
  return { ok: true, body: `${buffer.toString("utf8", start, frame.bodyEnd)}}`, seq: frame.seq };
}
