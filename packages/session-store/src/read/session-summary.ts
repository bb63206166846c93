import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import { type DecisionSummary, decisionOf, POLICY_DECISION_DOMAIN } from "./decisions.js";
import {
  EVAL_ORIGIN_DOMAIN,
  EVAL_SCORE_DOMAIN,
  type EvalSummary,
  evalOriginOf,
  evalScoreOf,
} from "./eval-summary.js";
import type { TurnStatus } from "./status.js";

/** An approval as `podkit session show` prints it: what was asked, and who answered when. */
export interface ApprovalSummary {
  callId: string;
  tool: string;
  arguments: string;
  askedBy: string;
  requestedAt: number;
  answer?: { decision: "allow" | "deny"; by: string; at: number; reason?: string };
  /** A sub-pod call waiting on this child session's approvals (never answered itself). */
  childSessionId?: string;
  /**
   * Waiting for a person: no answer and no result yet (never for a delegated call, whose child's
   * calls are the ones to answer). False once answered, and for a call the session closed without
   * an answer (its run was interrupted and the call got its result).
   */
  pending: boolean;
}

/** One turn of a segment as `podkit session show` prints it (and `GET /sessions/:id` returns it). */
export interface TurnSummary {
  /** Session turn number once it ended; null while it is open or it ended without an answer. */
  turn: number | null;
  trigger: string;
  input: string | null;
  tools: { name: string; isError: boolean; summary: string }[];
  /** Approvals the turn asked for, with their answers (given during the turn or later). */
  approvals: ApprovalSummary[];
  /** What the mode, the rules, the scope, the sandbox, hooks and guardrails decided, in log order. */
  decisions: DecisionSummary[];
  /**
   * The turn's typed answer (its `final_output` entry, docs/output.md): the value, the digest of
   * the schema it was checked against, the normalisations applied and how many repairs it took.
   */
  output?: OutputSummary;
  answer: string;
  /** How the turn stands (see `TurnStatus`). */
  status: TurnStatus;
  /** The run was interrupted (aborted, paused, or stopped for approvals). */
  interrupted: boolean;
  /** The failure of an `errored` turn. */
  error?: string;
  startedAt: number;
}

/** Token totals over every model request. */
export interface UsageTotals {
  requests: number;
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
}

/** What a segment records: the user inputs it carried over from its source, its turns, its usage. */
export interface SegmentSummaryText {
  /** User messages in the `segment_start` history (a fork or compaction carried them over). */
  carriedInputs: string[];
  turns: TurnSummary[];
  /** Decisions outside a turn: an input guardrail that rejected a message before its turn began. */
  decisions: DecisionSummary[];
  usage: UsageTotals;
  /** An eval item's origin and scores (docs/evals.md); absent in a segment that records neither. */
  eval?: EvalSummary;
}

/**
 * The turns and usage a segment's entries record: the read model's fold of a segment, beside
 * `replay` (which folds what a restore needs). Items are read loosely (any store's item shape).
 */
export function summarizeEntries<TItem = MinimalItem>(entries: readonly Entry<TItem>[]): SegmentSummaryText {
  const carriedInputs: string[] = [];
  const start = entries[0];
  if (start?.kind === "segment_start") {
    for (const item of start.history) {
      if (field(item, "type") === "message" && field(item, "role") === "user")
        carriedInputs.push(textOf(item));
    }
  }
  const turns: TurnSummary[] = [];
  const usage: UsageTotals = {
    requests: 0,
    inputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
  };
  const names = new Map<string, string>();
  const approvals = new Map<string, ApprovalSummary>();
  const outside: DecisionSummary[] = [];
  let evalSummary: EvalSummary | undefined;
  let current: TurnSummary | undefined;
  /** A turn is open from its `invoke` to its `run_completed`/`run_errored`. */
  let open = false;
  for (const entry of entries) {
    switch (entry.kind) {
      case "invoke":
        open = true;
        current = {
          turn: null,
          trigger: entry.trigger,
          input: null,
          tools: [],
          approvals: [],
          decisions: [],
          answer: "",
          status: "open",
          interrupted: false,
          startedAt: entry.ts,
        };
        turns.push(current);
        break;
      case "user_input":
        if (current !== undefined) current.input = entry.text;
        break;
      case "assistant_item": {
        const item = entry.item;
        if (field(item, "type") === "tool_call")
          names.set(String(field(item, "call_id")), String(field(item, "name")));
        if (field(item, "type") === "message" && current !== undefined) current.answer = textOf(item);
        break;
      }
      case "tool_result": {
        const item = entry.item;
        if (field(item, "type") !== "tool_result") break;
        const callId = String(field(item, "call_id"));
        const asked = approvals.get(callId);
        if (asked !== undefined) asked.pending = false;
        if (current !== undefined) {
          current.tools.push({
            name: names.get(callId) ?? "?",
            isError: field(item, "is_error") === true,
            summary: String(field(item, "summary") ?? ""),
          });
        }
        break;
      }
      case "turn_end":
        if (current !== undefined) current.turn = entry.turn;
        break;
      case "approval_requested": {
        const delegated = entry.child_session_id;
        const approval: ApprovalSummary = {
          callId: entry.call_id,
          tool: entry.tool,
          arguments: entry.arguments,
          askedBy: entry.asked_by,
          requestedAt: entry.ts,
          ...(delegated === undefined ? {} : { childSessionId: delegated }),
          pending: delegated === undefined,
        };
        if (!approvals.has(entry.call_id)) approvals.set(entry.call_id, approval);
        current?.approvals.push(approval);
        break;
      }
      case "approval_answered": {
        const approval = approvals.get(entry.call_id);
        if (approval !== undefined && approval.answer === undefined) {
          approval.pending = false;
          approval.answer = {
            decision: entry.decision,
            by: entry.by,
            at: entry.ts,
            ...(entry.reason === undefined ? {} : { reason: entry.reason }),
          };
        }
        break;
      }
      case "run_completed":
        open = false;
        if (current !== undefined) {
          current.status = entry.result;
          // A run stopping for an approval is always marked interrupted: that is not news.
          current.interrupted = entry.interrupted && entry.result !== "awaiting_approval";
        }
        break;
      case "run_errored":
        open = false;
        if (current !== undefined) {
          current.status = "errored";
          current.interrupted = entry.interrupted;
          current.error = entry.message;
        }
        break;
      case "extension": {
        if (entry.domain === FINAL_OUTPUT_DOMAIN) {
          const output = outputOf(entry.payload);
          if (output !== undefined && current !== undefined) current.output = output;
          break;
        }
        if (entry.domain === EVAL_ORIGIN_DOMAIN || entry.domain === EVAL_SCORE_DOMAIN) {
          evalSummary ??= { scores: [] };
          if (entry.domain === EVAL_SCORE_DOMAIN) {
            const score = evalScoreOf(entry.payload);
            if (score !== undefined) evalSummary.scores.push(score);
          } else {
            const origin = evalOriginOf(entry.payload);
            if (origin !== undefined) evalSummary.origin = origin;
          }
          break;
        }
        if (entry.domain !== POLICY_DECISION_DOMAIN) break;
        const decision = decisionOf(entry.payload, entry.ts);
        if (decision !== undefined)
          (open && current !== undefined ? current.decisions : outside).push(decision);
        break;
      }
      case "llm_usage":
        usage.requests += 1;
        usage.inputTokens += entry.input_tokens;
        usage.cacheReadTokens += entry.cache_read_tokens;
        usage.cacheWriteTokens += entry.cache_write_tokens;
        usage.outputTokens += entry.output_tokens;
        break;
      default:
        break;
    }
  }
  return {
    carriedInputs,
    turns,
    decisions: outside,
    usage,
    ...(evalSummary === undefined ? {} : { eval: evalSummary }),
  };
}

/** A typed answer as the read model shows it. */
export interface OutputSummary {
  value: unknown;
  schemaDigest: string;
  normalizations: string[];
  repairs: number;
}

/** The `extension` domain of a typed answer (written by `@podkit/pod`, docs/output.md). */
export const FINAL_OUTPUT_DOMAIN = "final_output";

/** A `final_output` payload read back (untrusted): undefined unless it has a value and a digest. */
function outputOf(payload: unknown): OutputSummary | undefined {
  if (typeof payload !== "object" || payload === null || !Object.hasOwn(payload, "value")) return undefined;
  const p = payload as Record<string, unknown>;
  if (typeof p.schema_digest !== "string") return undefined;
  return {
    value: p.value,
    schemaDigest: p.schema_digest,
    normalizations: Array.isArray(p.normalizations)
      ? p.normalizations.filter((n): n is string => typeof n === "string")
      : [],
    repairs: Array.isArray(p.repairs) ? p.repairs.length : 0,
  };
}

/** A field of an item read back from a log (any store's item shape: untrusted, loosely typed). */
function field(item: unknown, key: string): unknown {
  return typeof item === "object" && item !== null ? (item as Record<string, unknown>)[key] : undefined;
}

/** The text parts of a message item, joined and trimmed ("" for anything else). */
function textOf(item: unknown): string {
  const content = field(item, "content");
  if (field(item, "type") !== "message" || !Array.isArray(content)) return "";
  return content
    .map((part) =>
      field(part, "type") === "text" && typeof field(part, "text") === "string" ? field(part, "text") : "",
    )
    .join("")
    .trim();
}
