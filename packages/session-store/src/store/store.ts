import type { Entry, MinimalItem } from "../entry/entry-schema.js";

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

/**
 * The storage seam. Small enough for a SQL backend: a segment is an ordered list of entries
 * with a session id. Appends, creation and truncation are synchronous on purpose (the log is
 * written on the hot path of a turn; SQLite drivers are synchronous too); reads are async and
 * streaming. Implementations serialize appends to one segment across processes, and never
 * modify a segment except by appending to it or truncating it on explicit request.
 */
export interface Store<TItem = MinimalItem> {
  /**
   * Creates a segment holding exactly `entries` (the first is its `segment_start`), atomically:
   * either the whole segment exists afterwards or none of it. Fails if it already exists.
   */
  createSegment(ref: SegmentRef, entries: readonly Entry<TItem>[]): void;
  /**
   * Appends `entries` in order. With `expectedCount`, appends only if the segment holds exactly
   * that many entries, checked under the same lock as the write.
   */
  append(
    ref: SegmentRef,
    entries: readonly Entry<TItem>[],
    options?: { expectedCount?: number },
  ): AppendOutcome;
  /** Number of committed entries. */
  entryCount(ref: SegmentRef): number;
  /** Keeps the first `keep` entries (≥ 1); with `expectedCount`, only if the count still matches. */
  truncate(ref: SegmentRef, keep: number, options?: { expectedCount?: number }): TruncateOutcome;
  /** Streams the committed entries in order; an unterminated last line is not an entry. */
  readAll(ref: SegmentRef): AsyncIterable<Entry<TItem>>;
  /** Session ids, newest first. */
  listSessions(): Promise<string[]>;
  /** Segment ids of one session, newest first. */
  listSegments(sessionId: string): Promise<string[]>;
  /** The session holding `segmentId`, or undefined. */
  lookupSessionOf(segmentId: string): Promise<string | undefined>;
  /** Releases open files and held locks; the store may be used again afterwards. */
  close(): void;
}
