import type { RunResult, StopReason, UsageRecord, WorkerEvent } from "@podkit/llm-worker";
import type { AwaitedApproval, DriftFork, PolicyDecision, RunStatus } from "@podkit/session-store";
import type { BudgetExhausted } from "../budget/pod-budget.js";
import type { PartialOutputElement } from "../output/partial.js";
import type { PodWarning } from "../warnings.js";

/** Why a turn started: user input, a notification on an idle pod (`autoRun`), or `resume()`. */
export type PodTrigger = "user" | "notify" | "resume";

/** Why a run stopped: the model's stop reason, or `budget_exhausted` (a `[budget]` cap stopped it before a request). */
export type PodStopReason = StopReason | { readonly kind: "budget_exhausted"; readonly raw: undefined };

/**
 * The result of one `run()`/`resume()`: the worker's result plus the usage of this run. `status` is
 * the session log's run status (the one union every reader uses): the worker's, or
 * `budget_exhausted` when a `[budget]` cap stopped the run before a request.
 */
export interface PodRunResult extends Omit<RunResult, "stopReason" | "status"> {
  status: RunStatus;
  stopReason: PodStopReason | undefined;
  /** One record per model request of this run. */
  usage: UsageRecord[];
  /** The cap that stopped the run (status `budget_exhausted`, nothing half-sent); `resume()` goes on once it allows. */
  budget?: BudgetExhausted;
  /**
   * Status `awaiting_approval`: the calls a person must answer before `resume()` goes on — this
   * pod's and its sub-pods' at any depth, each with the session holding it and its pod path.
   */
  approvals?: AwaitedApproval[];
  /**
   * The typed answer (docs/output.md), checked against the output schema: present when the run
   * finished and the pod has an output schema. Also in the log as the `final_output` entry.
   */
  output?: unknown;
}

/** Why a compaction started: `threshold` before a turn, `request_threshold` before a request, `pod.compact()`. */
export type CompactionReason = "threshold" | "request_threshold" | "manual";

/** What `pod.compact()` did. */
export type CompactionOutcome =
  | {
      status: "compacted";
      fromSegmentId: string;
      toSegmentId: string;
      tokensBefore: number;
      tokensAfter: number;
      durationMs: number;
    }
  /** No session yet, or all of history fits in the retained part. */
  | { status: "skipped"; reason: "no_session" | "nothing_to_compact" };

/**
 * Progress of a background job (an after-turn job, and later sub-pods and the dispatcher). `job`
 * is the name the job reports itself under (memory's are `memory_extract` and
 * `memory_consolidate`); telemetry opens a span per job from its `start` to its `done`/`failed`.
 */
export interface JobProgressEvent {
  type: "job_progress";
  job: string;
  status: "start" | "done" | "failed";
  /** What it did (`staged 3 items`, `skipped: lock_in_use`, …). */
  detail?: string;
  error?: Error;
}

/**
 * What a pod reports while it runs (for display and telemetry; the session log is the record).
 * Warnings are not events: they go to `PodOptions.onWarning`, their one channel.
 */
export type PodEvent =
  | { type: "turn_start"; turn: number; trigger: PodTrigger }
  | { type: "request_start"; request: number; attempt: number }
  | { type: "text_delta"; delta: string }
  | { type: "reasoning_delta"; delta: string }
  | { type: "tool_call_start"; callId: string; name: string; arguments: string }
  | { type: "tool_call_end"; callId: string; name: string; summary: string; isError: boolean }
  /**
   * The typed answer as far as it has streamed (docs/output.md, "Streaming"), for display: the
   * `final_answer` call's arguments read so far (`partial`, the whole object each time) and the
   * elements of its top-level arrays that completed with this piece, each checked against its item
   * schema. In order; the last one of a call is its complete arguments. The answer that counts is
   * the run's `output`, checked when the call is complete.
   */
  | {
      type: "output_partial";
      callId: string;
      partial: Record<string, unknown>;
      elements: PartialOutputElement[];
    }
  | { type: "usage"; usage: UsageRecord }
  | { type: "notification"; message: string }
  /**
   * The mode, a rule, the scope, the OS sandbox, a hook or a guardrail decided about a call or an
   * answer (docs/permissions.md); the same payload is the `policy.decision` log entry.
   */
  | { type: "policy_decision"; decision: PolicyDecision }
  /** Another writer changed the session's segment; this pod continues in a fork of it. */
  | { type: "drift_fork"; fork: DriftFork }
  | JobProgressEvent
  /** The turn's final answer is in (status `finished`); `turn` is the session's turn count. */
  | { type: "turn_end"; turn: number }
  | { type: "compaction_start"; reason: CompactionReason }
  /** The session continues in segment `toSegmentId`; token counts are estimates. */
  | {
      type: "compaction_done";
      reason: CompactionReason;
      fromSegmentId: string;
      toSegmentId: string;
      tokensBefore: number;
      tokensAfter: number;
      durationMs: number;
    }
  /** Nothing was changed; `disabled`: this was the third failure in a row, automatic compaction is off. */
  | { type: "compaction_failed"; reason: CompactionReason; error: Error; disabled: boolean }
  | { type: "run_end"; result: PodRunResult | undefined; error?: Error }
  /**
   * A warning as it is raised (for display): the same warning reaches `PodOptions.onWarning`, the
   * record of every warning from construction on; this event only reaches those watching then.
   */
  | { type: "warning"; code: PodWarning["code"]; message: string }
  /** An event of a child pod (sub-pods), at any depth, with the child's pod path (`root › reviewer#2`). */
  | { type: "subpod"; path: string; sessionId: string; event: PodEvent };

/**
 * The pod event a worker event is shown as (undefined: internal detail, not shown). The worker's
 * `warning` events go the pod's one warning path instead (a `pod.worker` warning, then a `warning` event).
 */
export function podEventOf(event: WorkerEvent): PodEvent | undefined {
  switch (event.type) {
    case "request_start":
      return { type: "request_start", request: event.request, attempt: event.attempt };
    case "text_delta":
    case "reasoning_delta":
      // The same shape on both sides: passed on as it is, no copy per delta (the hot path).
      return event;
    case "tool_call_start":
      return { type: "tool_call_start", callId: event.callId, name: event.name, arguments: event.arguments };
    case "tool_call_end":
      return {
        type: "tool_call_end",
        callId: event.callId,
        name: event.name,
        summary: event.summary,
        isError: event.isError,
      };
    case "usage":
      return { type: "usage", usage: event.usage };
    default:
      return undefined;
  }
}
