import type { MinimalItem, ParentLink } from "../entry/entry-schema.js";
import type { ReplayOptions } from "../replay/replay.js";
import type { HistorySource } from "../replay/session-state.js";

/** Reported when a writer found its segment changed by someone else and moved to a new one. */
export interface DriftFork {
  fromSegmentId: string;
  toSegmentId: string;
  /** Entries the writer knew of, and entries the segment actually held. */
  expectedCount: number;
  actualCount: number;
}

/** Clock, id source, history item builders and a drift listener. */
export interface SessionLogOptions<TItem = MinimalItem> extends ReplayOptions<TItem> {
  /** Epoch-ms clock for `ts` (default `Date.now`). */
  now?: () => number;
  /** Id source for sessions and segments (default UUIDv7). */
  newId?: () => string;
  /** Called after a drift fork, e.g. to warn the user. */
  onDriftFork?: (event: DriftFork) => void;
}

/** Where an append landed. */
export interface AppendResult {
  segmentId: string;
  /** 0-based index of the (first) appended entry in that segment. */
  index: number;
  /** Set when this append found the segment changed and continued in a new segment. */
  driftFork: DriftFork | null;
}

/** Per-call options of a write. */
export interface WriteCallOptions {
  /** Aborts waiting for the segment's lock (held by another process) with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Append only if no other writer appended since this log read the segment, and never fork: on
   * drift the append fails with `SessionBusyError` (nothing written, this log stays as it was).
   * For writes that claim the session (an approval's answer, the resume that runs approved calls).
   */
  ifUnchanged?: boolean;
}

/** The first state of a new session or segment. */
export interface SegmentInit<TItem> {
  systemPrompt: string | null;
  config: Record<string, unknown>;
  history?: TItem[];
  /** Origins of items of `history` (system items, segmented user input), as a fork carries them. */
  historySources?: readonly HistorySource[];
  /** Makes the session a child of another (sub-pods): recorded in `segment_start.parent`. */
  parent?: ParentLink;
}
