export type { BlobAgeOptions, BlobStore } from "./blob-store.js";
export type { BlobGarbageOptions, BlobGarbageReport } from "./collect-garbage.js";
export { collectBlobGarbage, DEFAULT_BLOB_GRACE_MS } from "./collect-garbage.js";
export { assertBlobDigest, blobDigest, isBlobDigest } from "./digest.js";
