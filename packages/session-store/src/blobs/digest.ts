import { createHash } from "node:crypto";
import { type Pause, timeSlicer } from "../entry/time-slice.js";
import { SessionStoreUsageError } from "../errors.js";

/** A blob's name: `sha256:` and the 64 lowercase hex digits of the SHA-256 of its bytes. */
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Hashed in slices of this many bytes, with a turn of the event loop between slices when due. */
const HASH_SLICE = 1 << 20;

/** True for a well-formed blob digest (`sha256:<64 lowercase hex>`). */
export function isBlobDigest(value: unknown): value is string {
  return typeof value === "string" && DIGEST.test(value);
}

/**
 * Refuses anything but a well-formed digest with `SessionStoreUsageError`, before it comes near a
 * path or a query: a digest names a file under the store's root, so `../x` must never get that far.
 */
export function assertBlobDigest(digest: unknown): asserts digest is string {
  if (!isBlobDigest(digest)) {
    const shown = typeof digest === "string" ? JSON.stringify(digest.slice(0, 80)) : typeof digest;
    throw new SessionStoreUsageError(
      `invalid blob digest ${shown}: a digest is "sha256:" followed by 64 lowercase hex digits`,
    );
  }
}

/** Refuses anything but bytes with `SessionStoreUsageError`. */
export function assertBlobBytes(bytes: unknown): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array)) {
    throw new SessionStoreUsageError(
      `a blob is bytes (a Uint8Array or Buffer), got ${bytes === null ? "null" : typeof bytes}`,
    );
  }
}

/**
 * The digest of `bytes`, `sha256:<64 hex>`. Long contents are hashed in 1 MiB slices that give
 * the event loop a turn every few milliseconds (a file of tens of megabytes would otherwise hold
 * it for a tenth of a second).
 */
export async function blobDigest(bytes: Uint8Array, pause: Pause = timeSlicer()): Promise<string> {
  assertBlobBytes(bytes);
  const hash = createHash("sha256");
  for (let offset = 0; offset < bytes.length; offset += HASH_SLICE) {
    hash.update(bytes.subarray(offset, offset + HASH_SLICE));
    await pause();
  }
  return `sha256:${hash.digest("hex")}`;
}
