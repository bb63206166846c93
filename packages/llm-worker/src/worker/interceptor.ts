import type { Item, ToolCallItem, ToolResultItem } from "../items/item.js";
import type { StopReason } from "../stream/stop-reason.js";
import type { ToolOutput } from "../tools/tool.js";

/** What `preRequest` sees: the request-local copy of history about to be sent. */
export interface PreRequestContext {
  /** A copy; changing it does nothing. Return `continue_with` to send different items. */
  readonly items: readonly Item[];
  readonly systemPrompt: string | undefined;
  /** Model requests made so far in this run (0 before the first). */
  readonly requests: number;
  readonly signal: AbortSignal;
}

export type PreRequestDecision =
  | { action: "continue" }
  /**
   * Send these items instead of the copy, for this request only (e.g. pruned tool content). History
   * is untouched. `stablePrefixEnd`: the index of the last item whose prefix earlier requests sent
   * unchanged; on Anthropic it gets a cache breakpoint, so a request that changed what follows it
   * still reads that prefix.
   */
  | { action: "continue_with"; items: Item[]; stablePrefixEnd?: number }
  /** Stop the run before this request with result `yielded` (e.g. to compact, then `resume()`). */
  | { action: "yield" }
  /** Stop the run with `CancelledError`. */
  | { action: "cancel"; reason?: string };

/** What `onTurnEnd` sees: the model answered without tool calls, so the turn would end here. */
export interface TurnEndContext {
  readonly history: readonly Item[];
  /** The items committed from this last response. */
  readonly response: readonly Item[];
  /** Model requests made so far in this run. */
  readonly requests: number;
  /** Why the model stopped (`length` / `content-filter`: the answer is incomplete). */
  readonly stopReason: StopReason;
}

export type TurnEndDecision =
  | { action: "finish" }
  /** Commit these items (each through `onHistoryAppend`) and request again. */
  | { action: "continue"; items: Item[] }
  | { action: "pause" };

export type PreToolCallDecision =
  | { action: "continue" }
  /** The tool does not run; the model gets an error result carrying `reason`. */
  | { action: "deny"; reason: string }
  /** Stop the run with `CancelledError`; the call stays unanswered until the next run closes it. */
  | { action: "abort"; reason?: string }
  /** Stop the run with `paused`; `resume()` executes the unanswered calls. */
  | { action: "pause" }
  /**
   * The call waits for an approval from outside the run. The rest of the batch is still asked
   * (so every call that needs an answer is known before the run stops), then the run ends
   * `awaiting_approval` with none of the batch run; `resume()` asks again for every call.
   */
  | { action: "await_approval" };

export type AfterToolBatchDecision =
  | { action: "continue" }
  | { action: "finish" }
  | { action: "cancel"; reason?: string };

export type PostToolCallDecision =
  | { action: "continue" }
  /** Replace the result the model will see (the output cap applies to the new one too). */
  | { action: "rewrite"; result: ToolOutput }
  /**
   * Stop the run with `CancelledError`. The results of every tool in the batch are committed
   * first (the tools ran and had their effects); the model sees them on the next run.
   */
  | { action: "abort"; reason?: string };

/** Why a run ended abnormally, for `onAbort`. */
export interface AbortContext {
  readonly error: unknown;
  readonly history: readonly Item[];
}

/**
 * The seam through which the layer above (the pod) steers the loop. Every method is optional;
 * a missing one means "continue"/"finish". Decisions only: the interceptor never mutates
 * history except through returned items, which the worker commits through `onHistoryAppend`.
 */
export interface Interceptor {
  /** Items to commit at the start of each loop step (e.g. rendered notifications). */
  pendingHistoryAppends?(): Item[] | Promise<Item[]>;
  preRequest?(context: PreRequestContext): PreRequestDecision | Promise<PreRequestDecision>;
  onTurnEnd?(context: TurnEndContext): TurnEndDecision | Promise<TurnEndDecision>;
  preToolCall?(call: ToolCallItem): PreToolCallDecision | Promise<PreToolCallDecision>;
  /**
   * After a call: `output` is what the tool returned, before the output cap (its `denied` says
   * containment refused the call); for a call `preToolCall` denied, the synthetic error result.
   */
  postToolCall?(
    call: ToolCallItem,
    result: ToolResultItem,
    output: Readonly<ToolOutput>,
  ): PostToolCallDecision | Promise<PostToolCallDecision>;
  /**
   * After a batch's results are committed, before the `max_turns` check and the next request:
   * `finish` ends the run `finished` (the turn's answer came in a tool call — the pod's typed
   * answer); `cancel` stops it with `CancelledError`.
   */
  afterToolBatch?(context: {
    readonly requests: number;
  }): AfterToolBatchDecision | Promise<AfterToolBatchDecision>;
  /** Called when a run ends by abort, cancellation or error (after the worker's own cleanup). */
  onAbort?(context: AbortContext): void | Promise<void>;
}
