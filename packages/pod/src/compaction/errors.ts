import type { ErrorKind } from "@podkit/llm-worker";
import { hasMarker, PodkitPodError } from "../errors.js";

const MISSING_MARKER = Symbol.for("podkit.pod.error.compact-summary-missing");

/** The compaction worker finished twice (once after the nudge) without calling `write_summary`. */
export class CompactSummaryMissingError extends PodkitPodError {
  readonly [MISSING_MARKER] = true;
  /** The model did not follow the instructions this time; another try may well work. */
  override readonly errorKind: ErrorKind = "transient";
  override name = "CompactSummaryMissingError";

  constructor(requests: number) {
    super(
      `compaction failed: the compaction worker made ${requests} model requests and never called write_summary, even after a reminder; the session was not changed`,
      {
        hint: `try again; raise [compaction] worker_max_turns if ${requests} requests were too few to read and summarise, use a model that follows tool instructions ([model] ref), or set [compaction] enabled = false`,
      },
    );
  }

  static override isInstance(error: unknown): error is CompactSummaryMissingError {
    return hasMarker(error, MISSING_MARKER);
  }
}

const OVERSIZE_MARKER = Symbol.for("podkit.pod.error.compact-summary-oversize");

/** The summary stayed over `[compaction] summary_max_tokens` after one rewrite request. */
export class CompactSummaryOversizeError extends PodkitPodError {
  readonly [OVERSIZE_MARKER] = true;
  override name = "CompactSummaryOversizeError";

  constructor(
    readonly summaryTokens: number,
    readonly maxTokens: number,
  ) {
    super(
      `compaction failed: the summary has about ${summaryTokens} tokens, over [compaction] summary_max_tokens = ${maxTokens}, even after a request to shorten it; the session was not changed`,
      {
        hint: `raise [compaction] summary_max_tokens (it is ${maxTokens}), or lower [compaction] summary_target_tokens so the worker aims shorter, or try again`,
      },
    );
  }

  static override isInstance(error: unknown): error is CompactSummaryOversizeError {
    return hasMarker(error, OVERSIZE_MARKER);
  }
}

const OVER_THRESHOLD_MARKER = Symbol.for("podkit.pod.error.compaction-over-threshold");

/**
 * A compaction's new history would still be over `[compaction] threshold` (or over
 * `result_context_max_tokens`, when that is lower): it is rejected rather than accepted, since the
 * session would compact again at once or overflow the model's window.
 */
export class CompactionOverThresholdError extends PodkitPodError {
  readonly [OVER_THRESHOLD_MARKER] = true;
  override name = "CompactionOverThresholdError";

  constructor(
    readonly tokensBefore: number,
    readonly tokensAfter: number,
    readonly limit: number,
    readonly limitKey: "threshold" | "result_context_max_tokens",
  ) {
    super(
      `compaction failed: the compacted history would still hold about ${tokensAfter} tokens (before: ${tokensBefore}), over [compaction] ${limitKey} = ${limit}; the session was not changed`,
      { hint: overThresholdHint(limitKey, limit) },
    );
  }

  static override isInstance(error: unknown): error is CompactionOverThresholdError {
    return hasMarker(error, OVER_THRESHOLD_MARKER);
  }
}

/** Which limit to raise (the one that was hit) and what to shrink, in manifest keys. */
function overThresholdHint(limitKey: "threshold" | "result_context_max_tokens", limit: number): string {
  const raise =
    limitKey === "threshold"
      ? `raise [compaction] threshold (it is ${limit}; request_threshold must stay ≥ it)`
      : `raise [compaction] result_context_max_tokens (it is ${limit})`;
  return `${raise}, or make the compacted history smaller: lower [compaction] retained_tokens, auto_read_budget_tokens or summary_max_tokens`;
}

const NOTHING_MARKER = Symbol.for("podkit.pod.error.nothing-to-compact");

/** Everything in history falls inside the retained part: there is no older part to summarise. */
export class NothingToCompactError extends PodkitPodError {
  readonly [NOTHING_MARKER] = true;
  /** Nothing is wrong: the session is not yet long enough to compact. */
  override readonly errorKind: ErrorKind = "conflict";
  override name = "NothingToCompactError";

  constructor(items: number, retainedTokens: number) {
    super(
      `nothing to compact: all ${items} history items fit in the retained part ([compaction] retained_tokens = ${retainedTokens})`,
      { hint: "lower [compaction] retained_tokens to compact a session this small" },
    );
  }

  static override isInstance(error: unknown): error is NothingToCompactError {
    return hasMarker(error, NOTHING_MARKER);
  }
}
