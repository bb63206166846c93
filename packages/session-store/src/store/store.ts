import type { Entry, MinimalItem, SegmentStartEntry } from "../entry/entry-schema.js";

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
   * Optional: the same entries as `readAll`, in order, in arrays (a file chunk, a result set), so
   * a reader that wants them all (restore) pays one await per batch instead of one per entry.
   * Readers fall back to `readAll` when a store does not have it.
   */
  readBatches?(ref: SegmentRef): AsyncIterable<readonly Entry<TItem>[]>;
  /** The first and last entries and the count, without reading the whole segment. */
  describeSegment(ref: SegmentRef): Promise<SegmentSummary<TItem>>;
  /** Session ids, newest first. */
  listSessions(): Promise<string[]>;
  /** Segment ids of one session, newest first. */
  listSegments(sessionId: string): Promise<string[]>;
  /** The session holding `segmentId`, or undefined. */
  lookupSessionOf(segmentId: string): Promise<string | undefined>;
  /** Releases open files and held locks; the store may be used again afterwards. */
  close(): Promise<void>;
}
