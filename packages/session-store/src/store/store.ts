import type { BlobStore } from "../blobs/blob-store.js";
import type { Entry, EntrySchemas, MinimalItem, SegmentStartEntry } from "../entry/entry-schema.js";
import { SessionStoreUsageError } from "../errors.js";

/** Addresses one segment: the session it belongs to and its own id. */
export interface SegmentRef {
  sessionId: string;
  segmentId: string;
}

/**
 * Outcome of a conditional append. `drift` means the segment did not hold `expectedCount`
 * entries (another writer appended or truncated): nothing was written, the caller must fork.
 */
export type AppendOutcome = { status: "appended"; count: number } | { status: "drift"; count: number };

/** Outcome of a conditional truncation; `drift` means nothing was changed. */
export type TruncateOutcome = { status: "truncated"; count: number } | { status: "drift"; count: number };

/** Options of a write: the entry count it is conditional on, and a signal that ends a wait. */
export interface WriteOptions {
  expectedCount?: number;
  /** Aborts waiting for the segment (e.g. for another process's lock) with the signal's reason. */
  signal?: AbortSignal;
}

/** Options of a read. */
export interface ReadOptions {
  /** Stops the read between batches with the signal's reason. */
  signal?: AbortSignal;
}

/** What a session listing needs of a segment without reading all of it. */
export interface SegmentSummary<TItem = MinimalItem> {
  start: SegmentStartEntry<TItem>;
  /** The last committed entry (the `segment_start` itself in a segment holding nothing else). */
  last: Entry<TItem>;
  entryCount: number;
}

/**
 * The storage seam, asynchronous so that a server-backed store (PostgreSQL) can implement it:
 * a segment is an ordered list of entries with a session id. Implementations serialize appends
 * to one segment across processes — waiting for each other without blocking the event loop —
 * and never modify a segment except by appending to it or truncating it on explicit request.
 */
export interface Store<TItem = MinimalItem> {
  /**
   * Creates a segment holding exactly `entries` (the first is its `segment_start`), atomically:
   * either the whole segment exists afterwards or none of it. Fails if it already exists.
   */
  createSegment(ref: SegmentRef, entries: readonly Entry<TItem>[]): Promise<void>;
  /**
   * Appends `entries` in order; committed when the promise resolves. With `expectedCount`,
   * appends only if the segment holds exactly that many entries, checked atomically with the write.
   */
  append(ref: SegmentRef, entries: readonly Entry<TItem>[], options?: WriteOptions): Promise<AppendOutcome>;
  /** Number of committed entries. */
  entryCount(ref: SegmentRef, options?: { signal?: AbortSignal }): Promise<number>;
  /** Keeps the first `keep` entries (≥ 1); with `expectedCount`, only if the count still matches. */
  truncate(ref: SegmentRef, keep: number, options?: WriteOptions): Promise<TruncateOutcome>;
  /** Streams the committed entries in order; an unterminated last line is not an entry. */
  readAll(ref: SegmentRef): AsyncIterable<Entry<TItem>>;
  /**
   * The committed entries at index `from` and after (0 is the `segment_start`), in order, in
   * batches (a file chunk, a result set): what a reader that follows a live segment asks for —
   * the memory job after each turn, `podkit session show` while a run goes on, an event stream
   * resumed from an offset — and what restore reads with `from` 0. The cost is proportional to
   * what lies at `from` and after, not to the whole segment. Entries committed while the read
   * runs may or may not be included; a segment truncated below `from` yields nothing. Throws
   * `NotFoundError` for a missing segment, `CorruptEntryError` for a committed entry that does
   * not verify, `SessionStoreUsageError` for a negative `from`.
   */
  readFrom(ref: SegmentRef, from: number, options?: ReadOptions): AsyncIterable<readonly Entry<TItem>[]>;
  /** The first and last entries and the count, without reading the whole segment. */
  describeSegment(ref: SegmentRef): Promise<SegmentSummary<TItem>>;
  /** Session ids, newest first. */
  listSessions(): Promise<string[]>;
  /** Segment ids of one session, newest first. */
  listSegments(sessionId: string): Promise<string[]>;
  /**
   * The child sessions of `parentSessionId` (sub-pods: sessions whose `segment_start` names it as
   * `parent`), newest first, from an index the store keeps as it creates their segments — never by
   * reading every session. A child whose segment is not there (a crash between the index and the
   * segment) is not listed. An unknown parent has none.
   */
  listChildSessions(parentSessionId: string): Promise<string[]>;
  /** The session holding `segmentId`, or undefined. */
  lookupSessionOf(segmentId: string): Promise<string | undefined>;
  /** Releases open files and held locks; the store may be used again afterwards. */
  close(): Promise<void>;
  /**
   * Content-addressed blobs kept with the sessions (file contents for rewind, later media), on
   * the same storage and with the same durability; `FsStore` and `PostgresStore` have them. A
   * store without blobs leaves it out, and what needs them refuses it.
   */
  readonly blobs?: BlobStore;
}

/**
 * The key of an optional store method, internal to this package: `append` that returns its
 * outcome directly when it can finish without waiting (FsStore with its lease held, the common
 * case of one append after another) and a promise only when it has to wait. `SessionLog` then
 * resolves an append with one promise instead of a chain of three. Throws synchronously.
 */
export const appendNow = Symbol("podkit.session-store.appendNow");

/**
 * A store offering `appendNow`: `append` with the options as plain arguments, so the hot path
 * allocates no options object per append.
 */
export interface AppendsNow<TItem> {
  [appendNow](
    ref: SegmentRef,
    entries: readonly Entry<TItem>[],
    expectedCount: number | undefined,
    signal: AbortSignal | undefined,
  ): AppendOutcome | Promise<AppendOutcome>;
}

/**
 * Marks a store class's `append` as `appendNow` wrapped in a promise, so the log may call
 * `appendNow` instead. An `append` replaced on an instance or overridden in a subclass (a test's
 * counting or deliberately broken store) is a different function, unmarked, and is called as it is.
 */
export function markAppendNow(append: Store<never>["append"]): void {
  (append as { [appendNow]?: true })[appendNow] = true;
}

/** True when `store`'s `append` is marked as the promise form of its `appendNow`. */
export function appendsNow<TItem>(store: Store<TItem>): store is Store<TItem> & AppendsNow<TItem> {
  const marked = (store.append as { [appendNow]?: true })[appendNow];
  return marked === true;
}

/** `store[appendNow]` when the store's `append` is marked as its promise form, else `append`. */
export function appendEither<TItem>(
  store: Store<TItem>,
  ref: SegmentRef,
  entries: readonly Entry<TItem>[],
  expectedCount: number,
  signal: AbortSignal | undefined,
): AppendOutcome | Promise<AppendOutcome> {
  if (!appendsNow(store)) return store.append(ref, entries, { expectedCount, signal });
  return store[appendNow](ref, entries, expectedCount, signal);
}

/** What a store package is opened with: where its data is, and what to validate entries with. */
export interface StorePackageOptions<TItem> extends EntrySchemas<TItem> {
  /** The connection URL (a manifest names the variable holding it, never the URL itself). */
  url: string;
}

/**
 * What a store package exports so that an application can select it by name (a manifest's
 * `[session] store`): `@podkit/store-postgres` is one. The application finds the package the way
 * it finds tool packages (from the manifest's directory) or is handed it, and calls `openStore`;
 * no connection needs to be made before the first read or write.
 */
export interface StorePackage {
  openStore<TItem>(options: StorePackageOptions<TItem>): Store<TItem>;
}

/**
 * Refuses a `readFrom` index that is not an entry index (negative, fractional, not a number) with
 * `SessionStoreUsageError`, as the `Store` contract asks: for store implementations.
 */
export function assertReadFrom(from: number): void {
  if (!Number.isSafeInteger(from) || from < 0) {
    throw new SessionStoreUsageError(`cannot read from entry ${from}: give an entry index (0 or more)`);
  }
}
