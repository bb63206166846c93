import type {
  ApprovalDecision,
  InvokeTrigger,
  MinimalItem,
  ParentLink,
  SystemItem,
} from "../entry/entry-schema.js";

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

/** The answer to an approval, from its `approval_answered` entry. */
export interface ApprovalAnswer {
  decision: ApprovalDecision;
  reason?: string;
  by: string;
  /** When it was answered (epoch ms). */
  at: number;
  /** Answered by the approver of the run that asked, while it waited (its batch may have run since). */
  inRun?: boolean;
}

/**
 * One tool call that asked for approval, folded from its `approval_requested` entry and the first
 * `approval_answered` entry for its call id (a later one is never written: answers are conditional).
 */
export interface ApprovalRecord {
  callId: string;
  tool: string;
  /** The call's arguments as the model sent them (JSON text). */
  arguments: string;
  podPath: string[];
  /** What asked: the builtin policy (`bash`, `confirm_writes`) or a hook's name. */
  askedBy: string;
  reason?: string;
  /**
   * A delegated approval (format v3): this call is a sub-pod tool call waiting on the approvals of
   * this child session. It is never answered itself; it closes when the call gets its result.
   */
  childSessionId?: string;
  /** When the approval was requested (epoch ms). */
  requestedAt: number;
  answer?: ApprovalAnswer;
  /**
   * The call has its result (it ran, its denial was sent, or it was closed as interrupted): an
   * answer now would change nothing.
   */
  closed: boolean;
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
  /** Every approval requested in this segment (or carried into it), in request order. */
  approvals: ApprovalRecord[];
  /** The last run ended `awaiting_approval` and no run started since: `resume()` continues it. */
  awaitingApproval: boolean;
  /** The parent of a child session (sub-pods), from its `segment_start`; absent for a root session. */
  parent?: ParentLink;
  /** Number of entries folded, `segment_start` included. */
  entryCount: number;
}
