import { crc32 as zlibCrc32 } from "node:zlib";

const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c;
}

/** Below this many bytes a table loop beats the call into zlib (about 130 bytes on Node 20). */
const NATIVE_FROM = 128;

/**
 * CRC-32 (zlib's: reflected polynomial 0xEDB88320) of `bytes[start, end)`, as an unsigned
 * number. Short ranges are computed here, without the view and the native call zlib needs per
 * line; long ones go to `zlib.crc32`. Both give the same value.
 */
export function crc32(bytes: Uint8Array, start: number, end: number): number {
  if (end - start >= NATIVE_FROM) return zlibCrc32(bytes.subarray(start, end));
  let c = -1;
  for (let i = start; i < end; i++) c = (TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
