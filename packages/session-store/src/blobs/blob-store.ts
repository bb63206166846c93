/**
 * Content-addressed blobs inside a session store (docs/rewind.md): file contents a session's
 * file-change entries name by digest (rewind), and later media in tool results. A blob is
 * immutable; its name is the digest of its bytes, so writing the same bytes twice is one blob.
 */
export interface BlobStore {
  /**
   * Stores `bytes` and returns their digest, `sha256:<64 hex>`. Durable when the promise resolves
   * (the same rules as a log append: a crash after it never loses the blob, a crash before it
   * never leaves a partial blob under the digest). Storing bytes that are there is cheap: it
   * writes nothing but renews the blob's age, so garbage collection keeps a blob a writer has
   * just put (docs/rewind.md, "Garbage collection"): put the bytes, then append the entry naming
   * them, even when they are known to be stored.
   */
  put(bytes: Uint8Array): Promise<string>;
  /**
   * The bytes of `digest`, verified against it. `NotFoundError` when the store has no such blob;
   * `BlobCorruptError` when the stored bytes do not hash to it (untrusted storage).
   */
  get(digest: string): Promise<Uint8Array>;
  /** Whether a blob is stored under `digest` (its bytes are not read, so not verified). */
  has(digest: string): Promise<boolean>;
  /**
   * Every digest stored, in no particular order (for garbage collection); with `olderThanMs`,
   * only blobs last stored (`put`) more than that long ago by the store's clock.
   */
  list(options?: BlobAgeOptions): AsyncIterable<string>;
  /**
   * Removes the blobs named (missing ones are ignored) and returns the digests it removed. With
   * `olderThanMs`, a blob is removed only if it is still that old when it goes: one stored again
   * meanwhile (a writer about to append an entry naming it) stays, checked atomically with the
   * removal, so garbage collection never races a writer.
   */
  remove(digests: readonly string[], options?: BlobAgeOptions): Promise<string[]>;
  /**
   * Cleans what interrupted writes and removals left (FsStore: temp files of a put killed midway,
   * older than `olderThanMs`; a blob a removal was interrupted in the middle of is put back) and
   * returns the paths it handled; `dryRun` only lists them. Stores whose writes leave nothing
   * (PostgreSQL: a transaction is whole or nothing) do not have it.
   */
  removeDebris?(options: { olderThanMs: number; dryRun?: boolean }): Promise<string[]>;
}

/** Which blobs a listing or a removal concerns, by the time since they were last stored. */
export interface BlobAgeOptions {
  /** Only blobs last stored (`put`, which renews a stored blob) more than this many ms ago. */
  olderThanMs?: number;
}
