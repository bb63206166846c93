import { crc32 } from "node:zlib";

// A v2 line is the entry's JSON with two members added at its end, so it stays one JSON object
// per line (jq, grep and head keep working) and the entry's own bytes stay exactly as serialized:
//   {"kind":"user_input","ts":5,"text":"hi","seq":3,"crc":"1c291ca3"}
// `seq` is the line's 0-based index in its segment (segment_start is 0); `crc` is the CRC-32
// (zlib's, lowercase hex) of the UTF-8 bytes before `,"crc":`, so it covers `seq` as well.
const SEQ_MEMBER = ',"seq":';
const CRC_OPEN = Buffer.from(',"crc":"', "latin1");
const CRC_CLOSE = Buffer.from('"}', "latin1");
/** Length of `,"crc":"xxxxxxxx"}`, the fixed tail of every v2 line. */
export const CRC_TAIL_LENGTH = CRC_OPEN.length + 8 + CRC_CLOSE.length;
const HEX = /^[0-9a-f]{8}$/;

function hex8(value: number): string {
  return value.toString(16).padStart(8, "0");
}

/** Frames one serialized entry (`{…}`, no newline) as line number `seq` of a v2 segment. */
export function frameLine(body: string, seq: number): string {
  const covered = `${body.slice(0, -1)}${SEQ_MEMBER}${seq}`;
  return `${covered},"crc":"${hex8(crc32(covered))}"}`;
}

/** True when bytes `[start, end)` end like a v2 line (the checksum is not verified here). */
export function hasFrameTail(buffer: Buffer, start: number, end: number): boolean {
  const tail = end - CRC_TAIL_LENGTH;
  return (
    tail > start &&
    buffer.compare(CRC_OPEN, 0, CRC_OPEN.length, tail, tail + CRC_OPEN.length) === 0 &&
    buffer.compare(CRC_CLOSE, 0, CRC_CLOSE.length, end - CRC_CLOSE.length, end) === 0
  );
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
  const stored = buffer.toString("latin1", coveredEnd + CRC_OPEN.length, end - CRC_CLOSE.length);
  // Strict lowercase: an upper-case digit would be the same number written by someone else.
  if (!HEX.test(stored))
    return { ok: false, reason: `checksum ${JSON.stringify(stored)} is not 8 lowercase hex digits` };
  const actual = hex8(crc32(buffer.subarray(start, coveredEnd)));
  if (actual !== stored) {
    return {
      ok: false,
      reason: `checksum mismatch (stored ${stored}, bytes give ${actual}): the line changed after it was written`,
    };
  }
  const covered = buffer.toString("utf8", start, coveredEnd);
  const at = covered.lastIndexOf(SEQ_MEMBER);
  const digits = at === -1 ? "" : covered.slice(at + SEQ_MEMBER.length);
  if (!/^(0|[1-9]\d{0,14})$/.test(digits)) return { ok: false, reason: 'malformed "seq" member' };
  return { ok: true, body: `${covered.slice(0, at)}}`, seq: Number(digits) };
}
