import type { Item } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";

/** An approval as `podkit session show` prints it: what was asked, and who answered when. */
export interface ApprovalSummary {
  callId: string;
  tool: string;
  arguments: string;
  askedBy: string;
  requestedAt: number;
  answer?: { decision: "allow" | "deny"; by: string; at: number; reason?: string };
  /**
   * Waiting for a person: no answer and no result yet. False once answered, and for a call the
   * session closed without an answer (its run was interrupted and the call got its result).
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
  answer: string;
  /** `finished`, `paused`, … from `run_completed`; `error: …` from `run_errored`; `open` when neither. */
  outcome: string;
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
  usage: UsageTotals;
}

/** The turns and usage a segment's entries record. */
export function summarizeEntries(entries: readonly Entry<Item>[]): SegmentSummaryText {
  const carriedInputs: string[] = [];
  const start = entries[0];
  if (start?.kind === "segment_start") {
    for (const item of start.history) {
      if (item.type === "message" && item.role === "user") carriedInputs.push(textOf(item));
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
  let current: TurnSummary | undefined;
  for (const entry of entries) {
    switch (entry.kind) {
      case "invoke":
        current = {
          turn: null,
          trigger: entry.trigger,
          input: null,
          tools: [],
          approvals: [],
          answer: "",
          outcome: "open",
          startedAt: entry.ts,
        };
        turns.push(current);
        break;
      case "user_input":
        if (current !== undefined) current.input = entry.text;
        break;
      case "assistant_item": {
        const item = entry.item;
        if (item.type === "tool_call") names.set(item.call_id, item.name);
        if (item.type === "message" && current !== undefined) current.answer = textOf(item);
        break;
      }
      case "tool_result": {
        const item = entry.item;
        if (item.type !== "tool_result") break;
        const asked = approvals.get(item.call_id);
        if (asked !== undefined) asked.pending = false;
        if (current !== undefined) {
          current.tools.push({
            name: names.get(item.call_id) ?? "?",
            isError: item.is_error === true,
            summary: item.summary,
          });
        }
        break;
      }
      case "turn_end":
        if (current !== undefined) current.turn = entry.turn;
        break;
      case "approval_requested": {
        const approval: ApprovalSummary = {
          callId: entry.call_id,
          tool: entry.tool,
          arguments: entry.arguments,
          askedBy: entry.asked_by,
          requestedAt: entry.ts,
          pending: true,
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
        // A run stopping for an approval is always marked interrupted: that is not news.
        if (current !== undefined)
          current.outcome =
            entry.interrupted && entry.result !== "awaiting_approval"
              ? `${entry.result} (interrupted)`
              : entry.result;
        break;
      case "run_errored":
        if (current !== undefined) current.outcome = `error: ${entry.message}`;
        break;
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
  return { carriedInputs, turns, usage };
}

function textOf(item: Item): string {
  if (item.type !== "message") return "";
  return item.content
    .map((part) => (part.type === "text" ? part.text : ""))
    .join("")
    .trim();
}
