import type { MediaType } from "./media-ref.js";

/** What a media file's own bytes say it is: its type and, for an image, its pixel size. */
export interface SniffedMedia {
  readonly mediaType: MediaType;
  readonly width?: number;
  readonly height?: number;
}

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** A PDF's `%PDF-` header may follow up to this many bytes of junk (the spec's allowance). */
const PDF_HEADER_WINDOW = 1024;

function startsWith(bytes: Uint8Array, signature: readonly number[], at = 0): boolean {
  if (bytes.length < at + signature.length) return false;
  return signature.every((byte, index) => bytes[at + index] === byte);
}

function ascii(bytes: Uint8Array, at: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(at, at + length));
}

const u16be = (b: Uint8Array, at: number) => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const u16le = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
const u24le = (b: Uint8Array, at: number) => u16le(b, at) | ((b[at + 2] ?? 0) << 16);
const u32be = (b: Uint8Array, at: number) => ((u16be(b, at) << 16) >>> 0) + u16be(b, at + 2);

/** Width and height when both are positive, else nothing (a header too short or damaged). */
function sized(mediaType: MediaType, width: number, height: number): SniffedMedia {
  return width > 0 && height > 0 ? { mediaType, width, height } : { mediaType };
}

/** A JPEG's size, from its first start-of-frame marker (SOF0–SOF15 but DHT, JPG and DAC). */
function jpegSize(bytes: Uint8Array): SniffedMedia {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return { mediaType: "image/jpeg" };
    const marker = bytes[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    const length = u16be(bytes, at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return sized("image/jpeg", u16be(bytes, at + 7), u16be(bytes, at + 5));
    }
    if (length < 2) return { mediaType: "image/jpeg" };
    at += 2 + length;
  }
  return { mediaType: "image/jpeg" };
}

/** A WebP's size, from its first chunk (lossy `VP8 `, lossless `VP8L` or extended `VP8X`). */
function webpSize(bytes: Uint8Array): SniffedMedia {
  const chunk = ascii(bytes, 12, 4);
  if (chunk === "VP8 " && bytes.length >= 30)
    return sized("image/webp", u16le(bytes, 26) & 0x3fff, u16le(bytes, 28) & 0x3fff);
  if (chunk === "VP8L" && bytes.length >= 25) {
    const b1 = bytes[22] ?? 0;
    const b2 = bytes[23] ?? 0;
    const b3 = bytes[24] ?? 0;
    const width = 1 + ((bytes[21] ?? 0) | ((b1 & 0x3f) << 8));
    const height = 1 + ((b1 >> 6) | (b2 << 2) | ((b3 & 0x0f) << 10));
    return sized("image/webp", width, height);
  }
  if (chunk === "VP8X" && bytes.length >= 30)
    return sized("image/webp", 1 + u24le(bytes, 24), 1 + u24le(bytes, 27));
  return { mediaType: "image/webp" };
}

function hasPdfHeader(bytes: Uint8Array): boolean {
  const window = bytes.subarray(0, PDF_HEADER_WINDOW);
  for (
    let at = window.indexOf(0x25);
    at !== -1 && at + 5 <= window.length;
    at = window.indexOf(0x25, at + 1)
  ) {
    if (ascii(window, at, 5) === "%PDF-") return true;
  }
  return false;
}

/**
 * What `bytes` are by their own signature (magic bytes), never by a file name: PNG, JPEG, GIF,
 * WebP (with their pixel size when the header holds it) or PDF; undefined for anything else. A
 * `.png` that is really a script is undefined here, whatever its name says.
 */
export function sniffMedia(bytes: Uint8Array): SniffedMedia | undefined {
  if (startsWith(bytes, PNG)) {
    return ascii(bytes, 12, 4) === "IHDR"
      ? sized("image/png", u32be(bytes, 16), u32be(bytes, 20))
      : { mediaType: "image/png" };
  }
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return jpegSize(bytes);
  const head = ascii(bytes, 0, 6);
  if (head === "GIF87a" || head === "GIF89a") return sized("image/gif", u16le(bytes, 6), u16le(bytes, 8));
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return webpSize(bytes);
  if (hasPdfHeader(bytes)) return { mediaType: "application/pdf" };
  return undefined;
}
