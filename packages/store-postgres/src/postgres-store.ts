import { setImmediate as nextTurn } from "node:timers/promises";
import {
  type AppendOutcome,
  assertReadFrom,
  type BlobStore,
  CorruptEntryError,
  createEntryCodec,
  type Entry,
  type EntryCodec,
  type EntrySchemas,
  type MinimalItem,
  NotFoundError,
  type ReadOptions,
  type SegmentRef,
  type SegmentSummary,
  SessionStoreError,
  SessionStoreUsageError,
  type Store,
  type TruncateOutcome,
  type WriteOptions,
} from "@podkit/session-store";
import pg from "pg";
import { listenForAppends } from "./append-listener.js";
import { blobQueries, PostgresBlobStore } from "./blob-store.js";
import { PostgresQueryError } from "./errors.js";
import { createWithUpload, LONG_BODY, readLongBody, regroup } from "./long-body.js";
import { ensureSchema, quoteSchema } from "./migrations.js";
import { storeQueries } from "./queries.js";

/** Options of `PostgresStore`: a connection URL or a pool of your own, and where the tables live. */
export interface PostgresStoreOptions<TItem> extends EntrySchemas<TItem> {
  /** `postgres://user:password@host:port/database`; read it from the environment, never a manifest. */
  url?: string;
  /** A pool to use instead of `url`; the store never ends it. */
  pool?: pg.Pool;
  /** PostgreSQL schema holding the tables (default `public`); created and migrated on first use. */
  schema?: string;
  /** Connections of the store's own pool (default 10). */
  maxConnections?: number;
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const UNIQUE_VIOLATION = "23505";
/** Times an append without an expected count tries again after losing a race for its seq. */
const MAX_APPEND_RACES = 100;
/** Rows decoded between two turns of the event loop while a segment is read. */
const DECODE_BATCH = 512;
/** Bodies at least this long are decoded in slices (`decodeSliced`). */
const SLICED_BODY = 1 << 16;

function assertSafeId(id: string, what: "session" | "segment"): void {
  if (!SAFE_ID.test(id)) {
    throw new SessionStoreUsageError(
      `invalid ${what} id ${JSON.stringify(id)}: use letters, digits, "-" and "_" only (podkit uses UUIDv7 ids)`,
    );
  }
}

/**
 * A `Store` on PostgreSQL: one row per segment (`podkit_segments`: its id and session) and one
 * row per entry (`podkit_entries`, primary key `(segment_id, seq)`, the codec's exact text); the
 * entry count is the last seq + 1.
 *
 * Every append is a single statement, hence one transaction, and inserts only: its entries go at
 * the expected count, if the entry before them is there (locked, so a truncation cannot remove it
 * underneath) and nobody took those seqs first (the primary key). Of two machines appending at
 * the same count, the second waits for the first's commit and then hits the key: it writes
 * nothing and gets `drift`, so `SessionLog` forks exactly as on the filesystem. A connection lost
 * mid-write rolls the transaction back on the server: nothing partial.
 */
export class PostgresStore<TItem = MinimalItem> implements Store<TItem> {
  readonly schema: string;
  private readonly codec: EntryCodec<TItem>;
  private readonly options: PostgresStoreOptions<TItem>;
  private readonly sql: ReturnType<typeof storeQueries>;
  private pool: pg.Pool | undefined;
  private ready: Promise<pg.Pool> | undefined;
  /** The pool once its schema is known to be current: a write needs no await before its query. */
  private readyPool: pg.Pool | undefined;
  /** Names of the prepared append statements (one per schema: a pool may serve several stores). */
  private readonly statementNames: { appendOne: string; append: string; readFrom: string };
  /** Content-addressed blobs, in table `podkit_blobs` (`PostgresBlobStore`). */
  readonly blobs: BlobStore;

  constructor(options: PostgresStoreOptions<TItem>) {
    if ((options.url === undefined) === (options.pool === undefined)) {
      throw new SessionStoreUsageError("PostgresStore needs exactly one of `url` or `pool`");
    }
    this.options = options;
    this.schema = options.schema ?? "public";
    this.sql = storeQueries(quoteSchema(this.schema));
    this.codec = createEntryCodec(options);
    this.statementNames = {
      appendOne: `podkit_append_one_${this.schema}`,
      append: `podkit_append_${this.schema}`,
      readFrom: `podkit_read_from_${this.schema}`,
    };
    const blobsWhere = `postgres:${this.schema}/blobs`;
    this.blobs = new PostgresBlobStore(blobQueries(quoteSchema(this.schema)), blobsWhere, (operation, work) =>
      this.run(operation, blobsWhere, work),
    );
  }

  /** The pool, created and the schema migrated on first use. */
  private connected(): Promise<pg.Pool> {
    if (this.ready === undefined) {
      const pool =
        this.options.pool ??
        new pg.Pool({ connectionString: this.options.url, max: this.options.maxConnections ?? 10 });
      // An idle connection the server terminates emits `error` on the pool; without a listener
      // that would crash the process. The next query simply takes a fresh connection.
      if (this.options.pool === undefined) pool.on("error", () => undefined);
      this.pool = pool;
      this.ready = ensureSchema(pool, this.schema).then(
        () => {
          if (this.pool === pool) this.readyPool = pool; // not a pool `close()` ended meanwhile
          return pool;
        },
        (error) => {
          this.ready = undefined;
          throw error;
        },
      );
    }
    return this.ready;
  }

  /** Runs `work` against the pool; driver failures become `PostgresQueryError`. */
  private async run<T>(operation: string, where: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
    try {
      return await work(this.readyPool ?? (await this.connected()));
    } catch (error) {
      if (SessionStoreError.isInstance(error)) throw error;
      throw new PostgresQueryError({ operation, where, cause: error });
    }
  }

  private where(ref: SegmentRef): string {
    return `postgres:${this.schema}/${ref.sessionId}/${ref.segmentId}`;
  }

  async createSegment(ref: SegmentRef, entries: readonly Entry<TItem>[]): Promise<void> {
    assertSafeId(ref.sessionId, "session");
    assertSafeId(ref.segmentId, "segment");
    if (entries[0]?.kind !== "segment_start") {
      throw new SessionStoreUsageError(`segment ${ref.segmentId} must begin with a segment_start entry`);
    }
    // The segment_start may hold a long history: serialized in slices, sent as a parameter of
    // its own (a text[] element would be escaped character by character by the driver), and in
    // parts when it is long (`long-body.ts`).
    const [start, ...rest] = entries as [Entry<TItem>, ...Entry<TItem>[]];
    const parentSessionId = start.kind === "segment_start" ? (start.parent?.session_id ?? null) : null;
    const groups = regroup(await this.codec.encodeSliced(start));
    // A fork carries the usage entries of the whole session: thousands, encoded between turns of
    // the event loop.
    const bodies: string[] = [];
    for (const [index, entry] of rest.entries()) {
      bodies.push(this.codec.encode(entry));
      if (index % DECODE_BATCH === DECODE_BATCH - 1) await nextTurn();
    }
    await this.run("creating a segment", this.where(ref), async (pool) => {
      try {
        if (groups.length === 1) {
          await pool.query(this.sql.createSegment, [
            ref.segmentId,
            ref.sessionId,
            groups[0],
            JSON.stringify(bodies),
            parentSessionId,
          ]);
        } else {
          const values = { segmentId: ref.segmentId, sessionId: ref.sessionId };
          await createWithUpload(pool, this.sql, {
            ...values,
            groups,
            rest: JSON.stringify(bodies),
            parentSessionId,
          });
        }
      } catch (error) {
        if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) {
          throw new SessionStoreUsageError(
            `segment ${ref.segmentId} already exists in ${this.where(ref)}; segments are never replaced`,
          );
        }
        throw error;
      }
    });
  }

  async append(
    ref: SegmentRef,
    entries: readonly Entry<TItem>[],
    options?: WriteOptions,
  ): Promise<AppendOutcome> {
    assertSafeId(ref.segmentId, "segment");
    const bodies = entries.map((entry) => this.codec.encode(entry));
    options?.signal?.throwIfAborted();
    const expected = options?.expectedCount;
    const pool = this.readyPool;
    if (expected === undefined || pool === undefined) {
      return this.run("appending", this.where(ref), async (ready) =>
        expected === undefined
          ? { status: "appended", count: await this.appendAtEnd(ready, ref, bodies) }
          : this.appendAt(ready, ref, bodies, expected),
      );
    }
    // The common case, with no wrapper around it: every microsecond here is on each append.
    try {
      return await this.appendAt(pool, ref, bodies, expected);
    } catch (error) {
      if (SessionStoreError.isInstance(error)) throw error;
      throw new PostgresQueryError({ operation: "appending", where: this.where(ref), cause: error });
    }
  }

  /** The conditional append at `expected`: `drift` when it inserted nothing. */
  private async appendAt(
    pool: pg.Pool,
    ref: SegmentRef,
    bodies: readonly string[],
    expected: number,
  ): Promise<AppendOutcome> {
    if (bodies.length === 0) {
      // Nothing to insert, so no insert to check: the count alone decides.
      const count = await this.countOf(pool, ref);
      return { status: count === expected ? "appended" : "drift", count };
    }
    try {
      // Named: each connection parses and plans the statement once, not on every append. One
      // entry (most appends) goes as a plain text parameter: no array to build and unnest.
      const result = await pool.query(
        bodies.length === 1
          ? {
              name: this.statementNames.appendOne,
              text: this.sql.appendOne,
              values: [ref.segmentId, ref.sessionId, expected, bodies[0]],
            }
          : {
              name: this.statementNames.append,
              text: this.sql.append,
              values: [ref.segmentId, ref.sessionId, expected, JSON.stringify(bodies)],
            },
      );
      if (result.rowCount === bodies.length) return { status: "appended", count: expected + bodies.length };
    } catch (error) {
      // Another writer committed an entry at one of these seqs first.
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
    }
    // Nothing inserted: the segment is missing, holds another count, or lost the race. Read the
    // committed count now (the statement's own snapshot may predate the writer it waited for).
    return { status: "drift", count: await this.countOf(pool, ref) };
  }

  /**
   * Appends after whatever entry is last (an append without an expected count), trying again
   * when a concurrent writer took the same seqs; returns the new count.
   */
  private async appendAtEnd(pool: pg.Pool, ref: SegmentRef, bodies: readonly string[]): Promise<number> {
    if (bodies.length === 0) return this.countOf(pool, ref);
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await pool.query<{ entry_count: number }>(this.sql.appendAtEnd, [
          ref.segmentId,
          ref.sessionId,
          JSON.stringify(bodies),
        ]);
        const last = result.rows.at(-1);
        if (last !== undefined) return last.entry_count;
        await this.countOf(pool, ref); // throws NotFoundError for a missing segment
        throw new SessionStoreError(
          `segment ${ref.segmentId} holds no entries; restore the session to continue`,
        );
      } catch (error) {
        if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION || attempt === MAX_APPEND_RACES)
          throw error;
      }
    }
  }

  private async countOf(pool: pg.Pool, ref: SegmentRef): Promise<number> {
    const result = await pool.query<{ entry_count: number | null }>(this.sql.count, [
      ref.segmentId,
      ref.sessionId,
    ]);
    const row = result.rows[0];
    if (row === undefined)
      throw new NotFoundError({ what: "segment", id: ref.segmentId, where: this.where(ref) });
    if (row.entry_count === null) {
      throw new CorruptEntryError({ file: this.where(ref), line: 1, reason: "the segment holds no entries" });
    }
    return row.entry_count;
  }

  async entryCount(ref: SegmentRef, options?: { signal?: AbortSignal }): Promise<number> {
    options?.signal?.throwIfAborted();
    return this.run("counting entries", this.where(ref), (pool) => this.countOf(pool, ref));
  }

  async truncate(ref: SegmentRef, keep: number, options?: WriteOptions): Promise<TruncateOutcome> {
    options?.signal?.throwIfAborted();
    return this.run("truncating", this.where(ref), async (pool) => {
      const client = await pool.connect();
      let failed = true;
      try {
        await client.query("BEGIN");
        const count = await this.lockEnd(client, ref);
        const expected = options?.expectedCount;
        if (expected !== undefined && expected !== count) {
          await client.query("ROLLBACK");
          failed = false;
          return { status: "drift", count };
        }
        if (!Number.isInteger(keep) || keep < 1 || keep > count) {
          throw new SessionStoreUsageError(
            `cannot truncate segment ${ref.segmentId} to ${keep} entries: it holds ${count}; ` +
              "keep at least its segment_start (1) and at most every entry",
          );
        }
        await client.query(this.sql.truncate, [ref.segmentId, ref.sessionId, keep]);
        await client.query("COMMIT");
        failed = false;
        return { status: "truncated", count: keep };
      } finally {
        if (failed) await client.query("ROLLBACK").catch(() => undefined);
        // A connection in an unknown state (the error came from the socket) is not reused.
        client.release(failed);
      }
    });
  }

  /**
   * Inside a truncation's transaction: locks the segment row and its last entry (which keeps
   * appends out until the transaction ends, see `lockLast`) and returns the entry count.
   */
  private async lockEnd(client: pg.PoolClient, ref: SegmentRef): Promise<number> {
    const segment = await client.query(this.sql.lockSegment, [ref.segmentId, ref.sessionId]);
    if (segment.rowCount === 0) {
      throw new NotFoundError({ what: "segment", id: ref.segmentId, where: this.where(ref) });
    }
    for (let attempt = 1; ; attempt++) {
      const locked = await client.query<{ seq: number }>(this.sql.lockLast, [ref.segmentId]);
      const seq = locked.rows[0]?.seq;
      if (seq === undefined) {
        throw new CorruptEntryError({
          file: this.where(ref),
          line: 1,
          reason: "the segment holds no entries",
        });
      }
      // An append may have committed after the entry it waited for: lock the new last one.
      const last = await client.query<{ seq: number }>(this.sql.lastSeq, [ref.segmentId]);
      if (last.rows[0]?.seq === seq) return seq + 1;
      if (attempt === MAX_APPEND_RACES) {
        throw new SessionStoreError(
          `segment ${ref.segmentId} kept growing while it was being truncated; stop the other writer and try again`,
        );
      }
    }
  }

  async *readFrom(
    ref: SegmentRef,
    from: number,
    options?: ReadOptions,
  ): AsyncIterable<readonly Entry<TItem>[]> {
    assertReadFrom(from);
    assertSafeId(ref.segmentId, "segment");
    const signal = options?.signal;
    signal?.throwIfAborted();
    const where = this.where(ref);
    const rows = await this.run("reading a segment", where, async (pool) => {
      const result = await pool.query<[number | null, string | null, number | null]>({
        name: this.statementNames.readFrom,
        text: this.sql.readFrom,
        values: [ref.segmentId, ref.sessionId, from, LONG_BODY],
        rowMode: "array",
      });
      return result.rows;
    });
    if (rows.length === 0) throw new NotFoundError({ what: "segment", id: ref.segmentId, where });
    // Rows come in any order (no ORDER BY: a server-side sort of a long segment cost as much as
    // the rest of a restore); each is placed by its seq, and every seq up to the last one read
    // must be there.
    let last = from - 1;
    for (const [seq] of rows) if (seq !== null && seq > last) last = seq;
    const count = last + 1;
    if (count === 0 && from === 0) {
      throw new CorruptEntryError({ file: where, line: 1, reason: "the segment holds no entries" });
    }
    const bodies: (string | null | undefined)[] = new Array(Math.max(0, count - from));
    for (const [seq, body] of rows) if (seq !== null) bodies[seq - from] = body;
    let batch: Entry<TItem>[] = [];
    for (let index = 0; index < bodies.length; index++) {
      const body = bodies[index];
      const seq = from + index;
      let entry: Entry<TItem>;
      try {
        if (body === undefined) {
          throw new CorruptEntryError({
            file: where,
            line: seq + 1,
            reason: `entry seq ${seq} is missing (the segment counts ${count} entries)`,
          });
        }
        // Only a long body (a segment_start with a long history) is worth an await: it comes in
        // parts (null here) and is decoded in slices.
        entry =
          body !== null && body.length < SLICED_BODY
            ? this.codec.decode(body, where, seq + 1)
            : await this.codec.decodeSliced(body ?? (await this.longBody(ref, seq)), where, seq + 1);
      } catch (error) {
        // The entries before a corrupt one are still committed entries: hand them out first.
        if (batch.length > 0) yield batch;
        throw error;
      }
      batch.push(entry);
      if (batch.length === DECODE_BATCH) {
        yield batch;
        batch = [];
        // Decoding a long segment is work the event loop must not wait for in one piece.
        await nextTurn();
        signal?.throwIfAborted();
      }
    }
    if (batch.length > 0) yield batch;
  }

  /** Every committed entry, in order: `readFrom(ref, 0)` one entry at a time. */
  async *readAll(ref: SegmentRef): AsyncIterable<Entry<TItem>> {
    for await (const batch of this.readFrom(ref, 0)) yield* batch;
  }

  async describeSegment(ref: SegmentRef): Promise<SegmentSummary<TItem>> {
    assertSafeId(ref.segmentId, "segment");
    const where = this.where(ref);
    const row = await this.run("describing a segment", where, async (pool) => {
      const result = await pool.query<{
        first: string | null;
        last: string | null;
        first_seq: number | null;
        last_seq: number | null;
      }>(this.sql.describe, [ref.segmentId, ref.sessionId, LONG_BODY]);
      return result.rows[0];
    });
    if (row === undefined) throw new NotFoundError({ what: "segment", id: ref.segmentId, where });
    if (row.first_seq === null || row.last_seq === null) {
      throw new CorruptEntryError({
        file: where,
        line: 1,
        reason: row.last_seq === null ? "the segment holds no entries" : "entry seq 0 is missing",
      });
    }
    const entryCount = row.last_seq + 1;
    // A long body comes as null with its seq: read it in parts.
    const first = row.first ?? (await this.longBody(ref, row.first_seq));
    const start = await this.codec.decodeSliced(first, where, 1);
    if (start.kind !== "segment_start") {
      throw new SessionStoreUsageError(`${where} does not begin with a segment_start; it is not a segment`);
    }
    if (entryCount === 1) return { start, last: start, entryCount };
    const lastText = row.last ?? (await this.longBody(ref, row.last_seq));
    const last = await this.codec.decodeSliced(lastText, where, entryCount);
    return { start, last, entryCount };
  }

  async listSessions(): Promise<string[]> {
    return this.run("listing sessions", `postgres:${this.schema}`, async (pool) => {
      const result = await pool.query<{ session_id: string }>(this.sql.listSessions);
      return result.rows.map((row) => row.session_id);
    });
  }

  async listSegments(sessionId: string): Promise<string[]> {
    assertSafeId(sessionId, "session");
    const ids = await this.run("listing segments", `postgres:${this.schema}/${sessionId}`, async (pool) => {
      const result = await pool.query<{ segment_id: string }>(this.sql.listSegments, [sessionId]);
      return result.rows.map((row) => row.segment_id);
    });
    if (ids.length === 0)
      throw new NotFoundError({ what: "session", id: sessionId, where: `postgres:${this.schema}` });
    return ids;
  }

  async listChildSessions(parentSessionId: string): Promise<string[]> {
    assertSafeId(parentSessionId, "session");
    return this.run("listing child sessions", `postgres:${this.schema}/${parentSessionId}`, async (pool) => {
      const result = await pool.query<{ session_id: string }>(this.sql.listChildSessions, [parentSessionId]);
      return result.rows.map((row) => row.session_id);
    });
  }

  async lookupSessionOf(segmentId: string): Promise<string | undefined> {
    assertSafeId(segmentId, "segment");
    return this.run("looking up a segment", `postgres:${this.schema}`, async (pool) => {
      const result = await pool.query<{ session_id: string }>(this.sql.lookup, [segmentId]);
      return result.rows[0]?.session_id;
    });
  }

  /**
   * Calls `onAppend` for every write committed to a segment of this store's schema, by any
   * process on any machine (a trigger notifies channel `podkit_append`), until `close()`. Holds
   * one connection of the pool. Notifications sent while that connection is being replaced are
   * lost: use it to wake a reader early, not as the only way to see new entries.
   */
  async listenForAppends(onAppend: (ref: SegmentRef) => void): Promise<{ close(): Promise<void> }> {
    return this.run("listening for appends", `postgres:${this.schema}`, async (pool) =>
      listenForAppends(pool, this.schema, onAppend),
    );
  }

  /** The UTF-8 bytes of a body longer than `LONG_BODY`, read in parts. */
  private longBody(ref: SegmentRef, seq: number): Promise<Buffer> {
    return this.run("reading a long entry", this.where(ref), (pool) =>
      readLongBody(pool, this.sql, ref.segmentId, seq),
    );
  }

  /** Ends the store's own pool (a pool passed in is left open); the next call opens a new one. */
  async close(): Promise<void> {
    const pool = this.pool;
    const ready = this.ready;
    this.pool = undefined;
    this.ready = undefined;
    this.readyPool = undefined;
    if (pool === undefined || this.options.pool !== undefined) return;
    await ready?.catch(() => undefined);
    await pool.end();
  }
}
