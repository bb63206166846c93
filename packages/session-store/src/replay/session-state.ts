import type { InvokeTrigger, MinimalItem, ParentLink, SystemItem } from "../entry/entry-schema.js";

/**
 * One request's token usage (a request is one model call), as persisted by an `llm_usage`
 * entry. The same shape as llm-worker's `UsageRecord`.
 */
export interface UsageRecord {
  /** History length (items) the request was built from. */
  historyLen: number;
  /** Full prompt tokens, cache reads and writes included. */
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  reasoningTokens?: number;
}

/**
 * Where a history item came from, for the items a restore treats by origin: the system item
 * behind a system message (`item.kind`: context, notification, interrupt note, attachment) and
 * the structured segments of a user input. `index` is the item's position in `history`.
 */
export type HistorySource =
  | { index: number; from: "system_item"; item: SystemItem }
  | { index: number; from: "user_input"; segments: unknown[] };

/** The segment a segment was cut from and the turn count at the cut. */
export interface LineageRef {
  segmentId: string;
  atTurn: number;
}

/** A turn whose `invoke` has no terminal entry (`run_completed`/`run_errored`) after it. */
export interface InFlightTurn {
  trigger: InvokeTrigger;
  /** 0-based index of the `invoke` entry in the segment; truncating to it rolls the turn back. */
  entryIndex: number;
}

/** Everything a restore needs, folded from one segment's entries. */
export interface SessionState<TItem = MinimalItem> {
  sessionId: string;
  segmentId: string;
  /** `v` of the segment's `segment_start`. */
  formatVersion: number;
  /** The rendered system prompt, verbatim (never re-rendered), or null. */
  systemPrompt: string | null;
  config: Record<string, unknown>;
  history: TItem[];
  /** Origins of the history items that came from `system_item` and segmented `user_input` entries, by index. */
  historySources: HistorySource[];
  /** Turn count: the last `turn_end`, else the `at_turn` of the segment's lineage, else 0. */
  turn: number;
  /** The last run ended interrupted, or a turn is still in flight (a crash mid-turn). */
  interrupted: boolean;
  inFlight: InFlightTurn | null;
  usage: UsageRecord[];
  /** Folded `extension` state per domain (e.g. `memory.extract`): latest payload unless the domain registered a fold. */
  extensions: Map<string, unknown>;
  lineage: { forkedFrom: LineageRef | null; compactedFrom: LineageRef | null };
  /** The parent of a child session (sub-pods), from its `segment_start`; absent for a root session. */
  parent?: ParentLink;
  /** Number of entries folded, `segment_start` included. */
  entryCount: number;
}
