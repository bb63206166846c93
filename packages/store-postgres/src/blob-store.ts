import {
  assertBlobDigest,
  type BlobAgeOptions,
  BlobCorruptError,
  type BlobStore,
  blobDigest,
  NotFoundError,
  SessionStoreUsageError,
} from "@podkit/session-store";
import type pg from "pg";

/** Digests per page of a listing, and per DELETE of a removal. */
const PAGE = 1000;

/** The blob statements for the quoted schema `s` (table `podkit_blobs`, schema version 5). */
export function blobQueries(s: string) {
  // `$n::float8 IS NULL OR …`: one statement with and without an age; the age is the database's
  // clock against `last_put_at`, which the database's clock wrote.
  const olderThan = (n: number) =>
    `($${n}::float8 IS NULL OR last_put_at < now() - make_interval(secs => $${n}::float8 / 1000))`;
  return {
    // One statement, durable when it commits. Bytes already stored are not written again; the
    // put renews their age instead (migration 5 says why).
    put: `INSERT INTO ${s}.podkit_blobs (digest, bytes) VALUES ($1, $2)
          ON CONFLICT (digest) DO UPDATE SET last_put_at = now()`,
    get: `SELECT bytes FROM ${s}.podkit_blobs WHERE digest = $1`,
    has: `SELECT 1 FROM ${s}.podkit_blobs WHERE digest = $1`,
    // Keyset pages in primary-key order: memory bounded by a page, whatever the table holds.
    list: `SELECT digest FROM ${s}.podkit_blobs WHERE digest > $1 AND ${olderThan(2)}
           ORDER BY digest LIMIT ${PAGE}`,
    // The age is checked by the DELETE itself: a row a put renewed meanwhile is re-checked
    // (READ COMMITTED) and stays.
    remove: `DELETE FROM ${s}.podkit_blobs WHERE digest = ANY($1::text[]) AND ${olderThan(2)} RETURNING digest`,
  };
}

/** How a `PostgresBlobStore` reaches the database: the store's pool, errors made typed. */
export type RunQuery = <T>(operation: string, work: (pool: pg.Pool) => Promise<T>) => Promise<T>;

/**
 * The blobs of a `PostgresStore`: one row per blob in `podkit_blobs` (digest, bytes, when first
 * and last stored). A put is one statement, so a blob is there whole once it commits or not at
 * all; a get verifies the bytes against the digest, since a row can be changed by anyone with
 * access to the database.
 */
export class PostgresBlobStore implements BlobStore {
  constructor(
    private readonly sql: ReturnType<typeof blobQueries>,
    /** `postgres:<schema>/blobs`, for errors. */
    private readonly where: string,
    private readonly run: RunQuery,
  ) {}

  async put(bytes: Uint8Array): Promise<string> {
    const digest = await blobDigest(bytes);
    const buffer = Buffer.isBuffer(bytes)
      ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    await this.run("storing a blob", (pool) => pool.query(this.sql.put, [digest, buffer]));
    return digest;
  }

  async get(digest: string): Promise<Uint8Array> {
    assertBlobDigest(digest);
    const bytes = await this.run("reading a blob", async (pool) => {
      const result = await pool.query<{ bytes: Buffer }>(this.sql.get, [digest]);
      return result.rows[0]?.bytes;
    });
    if (bytes === undefined) throw new NotFoundError({ what: "blob", id: digest, where: this.where });
    const actual = await blobDigest(bytes);
    if (actual !== digest) {
      throw new BlobCorruptError({
        digest,
        where: this.where,
        reason: `its ${bytes.length} bytes hash to ${actual}`,
      });
    }
    return bytes;
  }

  async has(digest: string): Promise<boolean> {
    assertBlobDigest(digest);
    return this.run("looking up a blob", async (pool) => {
      const result = await pool.query(this.sql.has, [digest]);
      return result.rows.length > 0;
    });
  }

  async *list(options?: BlobAgeOptions): AsyncIterable<string> {
    const olderThanMs = ageOf(options);
    let after = "";
    for (;;) {
      const page = await this.run("listing blobs", async (pool) => {
        const result = await pool.query<{ digest: string }>(this.sql.list, [after, olderThanMs]);
        return result.rows.map((row) => row.digest);
      });
      yield* page;
      const last = page.at(-1);
      if (last === undefined || page.length < PAGE) return;
      after = last;
    }
  }

  async remove(digests: readonly string[], options?: BlobAgeOptions): Promise<string[]> {
    for (const digest of digests) assertBlobDigest(digest);
    const olderThanMs = ageOf(options);
    const removed: string[] = [];
    for (let start = 0; start < digests.length; start += PAGE) {
      const batch = digests.slice(start, start + PAGE);
      const gone = await this.run("removing blobs", async (pool) => {
        const result = await pool.query<{ digest: string }>(this.sql.remove, [batch, olderThanMs]);
        return new Set(result.rows.map((row) => row.digest));
      });
      // In the order asked, as the filesystem store reports them.
      for (const digest of batch) if (gone.delete(digest)) removed.push(digest);
    }
    return removed;
  }
}

function ageOf(options: BlobAgeOptions | undefined): number | null {
  const olderThanMs = options?.olderThanMs;
  if (olderThanMs === undefined) return null;
  if (!Number.isFinite(olderThanMs) || olderThanMs < 0) {
    throw new SessionStoreUsageError(`olderThanMs must be a duration in ms (0 or more), got ${olderThanMs}`);
  }
  return olderThanMs;
}
