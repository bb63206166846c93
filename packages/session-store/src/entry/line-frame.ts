import { crc32 as zlibCrc32 } from "node:zlib";
import { crc32 } from "./crc32.js";

// A v2 line is the entry's JSON with two members added at its end, so it stays one JSON object
// per line (jq, grep and head keep working) and the entry's own bytes stay exactly as serialized:
//   {"kind":"user_input","ts":5,"text":"hi","seq":3,"crc":"1c291ca3"}
// `seq` is the line's 0-based index in its segment (segment_start is 0); `crc` is the CRC-32
// (zlib's, lowercase hex) of the UTF-8 bytes before `,"crc":`, so it covers `seq` as well.
const SEQ_MEMBER = ',"seq":';
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

/**
 * The bytes of consecutive v2 lines (newlines included) for serialized entries starting at
 * sequence number `firstSeq` — the append path's form of `frameLine`. The lines are encoded to
 * UTF-8 in one call with a placeholder checksum, which is then computed over the bytes and
 * written in place.
 */
export function frameLines(bodies: readonly string[], firstSeq: number): Buffer {
  let text = "";
  for (let i = 0; i < bodies.length; i++) {
    text += `${(bodies[i] as string).slice(0, -1)}${SEQ_MEMBER}${firstSeq + i},"crc":"00000000"}\n`;
  }
  const out = Buffer.from(text, "utf8");
  let start = 0;
  for (let i = 0; i < bodies.length; i++) {
    const end = i === bodies.length - 1 ? out.length - 1 : out.indexOf(0x0a, start);
    const digitsAt = end - CRC_CLOSE.length - 8;
    let crc = crc32(out, start, end - CRC_TAIL_LENGTH);
    for (let d = 7; d >= 0; d--, crc >>>= 4) out[digitsAt + d] = HEX_DIGITS[crc & 0xf] as number;
    start = end + 1;
  }
  return out;
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

/** A v2 line taken apart: the entry's JSON as written and the sequence number it carries. */
export type Unframed = { ok: true; body: string; seq: number } | { ok: false; reason: string };

/**
 * Checks and strips the frame of the v2 line in bytes `[start, end)` (no newline). The bytes
 * must already be known to be valid UTF-8. Fails with a reason when the tail is missing, the
 * checksum does not match the bytes, or the `seq` member is malformed.
 */
export function unframeLine(buffer: Buffer, start: number, end: number): Unframed {
  if (!hasFrameTail(buffer, start, end)) {
    return { ok: false, reason: 'no `"seq"`/`"crc"` frame at the end of the line (format v2 requires one)' };
  }
  const coveredEnd = end - CRC_TAIL_LENGTH;
  const stored = readHex8(buffer, coveredEnd + CRC_OPEN.length);
  if (stored === -1) {
    const text = buffer.toString("latin1", coveredEnd + CRC_OPEN.length, end - CRC_CLOSE.length);
    return { ok: false, reason: `checksum ${JSON.stringify(text)} is not 8 lowercase hex digits` };
  }
  const actual = crc32(buffer, start, coveredEnd);
  if (actual !== stored) {
    return {
      ok: false,
      reason: `checksum mismatch (stored ${hex8(stored)}, bytes give ${hex8(actual)}): the line changed after it was written`,
    };
  }
  // `,"seq":<digits>` ends the covered bytes; read the digits backwards.
  let seq = 0;
  let scale = 1;
  let at = coveredEnd - 1;
  for (; at > start && (buffer[at] as number) >= 0x30 && (buffer[at] as number) <= 0x39; at--) {
    seq += ((buffer[at] as number) - 0x30) * scale;
    scale *= 10;
  }
  const digits = coveredEnd - 1 - at;
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
  // The entry's own JSON: everything before `,"seq":`, closed again.
  return { ok: true, body: `${buffer.toString("utf8", start, memberAt)}}`, seq };
}
