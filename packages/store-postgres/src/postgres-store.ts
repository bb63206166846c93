import { setImmediate as nextTurn } from "node:timers/promises";
import {
  type AppendOutcome,
  assertReadFrom,
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
 * A `Store` on PostgreSQL: one row per segment (`podkit_segments`, holding its entry count) and
 * one row per entry (`podkit_entries`, primary key `(segment_id, seq)`, the codec's exact text).
 *
 * Every write is a single statement, hence one transaction: an append updates the segment row —
 * conditional on the expected count — and inserts its entries in the same statement. The row
 * lock of that UPDATE serializes appends to one segment across machines (a concurrent writer
 * waits, then re-checks the count against the committed row), and the primary key makes an
 * interleaving impossible even if that check were wrong. The loser of a race sees a different
 * count, writes nothing and gets `drift`, so `SessionLog` forks exactly as on the filesystem.
 * A connection lost mid-write rolls the transaction back on the server: nothing partial.
 */
export class PostgresStore<TItem = MinimalItem> implements Store<TItem> {
  readonly schema: string;
  private readonly codec: EntryCodec<TItem>;
  private readonly options: PostgresStoreOptions<TItem>;
  private readonly sql: ReturnType<typeof storeQueries>;
  private pool: pg.Pool | undefined;
  private ready: Promise<pg.Pool> | undefined;

  constructor(options: PostgresStoreOptions<TItem>) {
    if ((options.url === undefined) === (options.pool === undefined)) {
      throw new SessionStoreUsageError("PostgresStore needs exactly one of `url` or `pool`");
    }
    this.options = options;
    this.schema = options.schema ?? "public";
    this.sql = storeQueries(quoteSchema(this.schema));
    this.codec = createEntryCodec(options);
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
        () => pool,
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
      return await work(await this.connected());
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
            entries.length,
            groups[0],
            JSON.stringify(bodies),
          ]);
        } else {
          const values = { segmentId: ref.segmentId, sessionId: ref.sessionId, count: entries.length };
          await createWithUpload(pool, this.sql, { ...values, groups, rest: JSON.stringify(bodies) });
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
    return this.run("appending", this.where(ref), async (pool) => {
      const expected = options?.expectedCount ?? null;
      // Named: each connection parses and plans the statement once, not on every append. One
      // entry (most appends) goes as a plain text parameter: no array to build and unnest.
      const result = await pool.query<{ entry_count: number }>(
        bodies.length === 1
          ? {
              name: `podkit_append_one_${this.schema}`,
              text: this.sql.appendOne,
              values: [ref.segmentId, ref.sessionId, expected, bodies[0]],
            }
          : {
              name: `podkit_append_${this.schema}`,
              text: this.sql.append,
              values: [ref.segmentId, ref.sessionId, bodies.length, expected, JSON.stringify(bodies)],
            },
      );
      const appended = result.rows[0];
      if (appended !== undefined) return { status: "appended", count: appended.entry_count };
      // No row updated: the segment is missing or holds another count. Read the committed count
      // now (the statement's own snapshot may predate the writer it waited for).
      return { status: "drift", count: await this.countOf(pool, ref) };
    });
  }

  private async countOf(pool: pg.Pool, ref: SegmentRef): Promise<number> {
    const result = await pool.query<{ entry_count: number }>(this.sql.count, [ref.segmentId, ref.sessionId]);
    const row = result.rows[0];
    if (row === undefined)
      throw new NotFoundError({ what: "segment", id: ref.segmentId, where: this.where(ref) });
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
        const locked = await client.query<{ entry_count: number }>(this.sql.lockSegment, [
          ref.segmentId,
          ref.sessionId,
        ]);
        const count = locked.rows[0]?.entry_count;
        if (count === undefined) {
          throw new NotFoundError({ what: "segment", id: ref.segmentId, where: this.where(ref) });
        }
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
        await client.query(this.sql.truncate, [ref.segmentId, keep]);
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
      const result = await pool.query<[number, number | null, string | null, number | null]>({
        name: `podkit_read_from_${this.schema}`,
        text: this.sql.readFrom,
        values: [ref.segmentId, ref.sessionId, from, LONG_BODY],
        rowMode: "array",
      });
      return result.rows;
    });
    const first = rows[0];
    if (first === undefined) throw new NotFoundError({ what: "segment", id: ref.segmentId, where });
    // Rows come in any order (no ORDER BY: a server-side sort of a long segment cost as much as
    // the rest of a restore); the segment row's count says which seqs must be there, and each
    // row is placed by its seq.
    const count = first[0];
    const bodies: (string | null | undefined)[] = new Array(Math.max(0, count - from));
    for (const [, seq, body] of rows) {
      if (seq === null) continue;
      if (seq >= count) {
        throw new CorruptEntryError({
          file: where,
          line: seq + 1,
          reason: `entry seq ${seq} lies past the segment's count of ${count} entries`,
        });
      }
      bodies[seq - from] = body;
    }
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
        // Only a long body (a segment_start with a long history) is worth an await.
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
        entry_count: number;
        first: string | null;
        last: string | null;
        first_seq: number | null;
        last_seq: number | null;
      }>(this.sql.describe, [ref.segmentId, ref.sessionId, LONG_BODY]);
      return result.rows[0];
    });
    if (row === undefined) throw new NotFoundError({ what: "segment", id: ref.segmentId, where });
    // A long body comes as null with its seq: read it in parts.
    const first = row.first ?? (row.first_seq === null ? null : await this.longBody(ref, row.first_seq));
    const lastText = row.last ?? (row.last_seq === null ? null : await this.longBody(ref, row.last_seq));
    if (first === null || lastText === null) {
      throw new CorruptEntryError({
        file: where,
        line: first === null ? 1 : row.entry_count,
        reason: "the segment row counts an entry that is missing",
      });
    }
    const start = await this.codec.decodeSliced(first, where, 1);
    if (start.kind !== "segment_start") {
      throw new SessionStoreUsageError(`${where} does not begin with a segment_start; it is not a segment`);
    }
    const last =
      row.entry_count === 1 ? start : await this.codec.decodeSliced(lastText, where, row.entry_count);
    return { start, last, entryCount: row.entry_count };
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
    if (pool === undefined || this.options.pool !== undefined) return;
    await ready?.catch(() => undefined);
    await pool.end();
  }
}
