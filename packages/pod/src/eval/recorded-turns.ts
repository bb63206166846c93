import { describeSession, type Entry, lineOf, type Store } from "@podkit/session-store";
import { FINAL_OUTPUT_DOMAIN } from "../output/pod-output.js";

/** A tool call of a turn with the result it got (none when the turn ended before one). */
export interface RecordedToolCall {
  readonly callId: string;
  readonly name: string;
  /** The arguments exactly as the model sent them (a JSON string). */
  readonly arguments: string;
  result?: { readonly summary: string; readonly content?: string; readonly is_error?: boolean };
}

/** Token totals of a turn's model requests (`llm_usage` entries). */
export interface TurnUsage {
  requests: number;
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
}

/** One turn as a session log records it: its input, its tool calls in order, its answer, its usage. */
export interface RecordedTurn {
  /** The session's turn number (its `turn_end`), else the one after the previous turn's. */
  turn: number;
  readonly trigger: string;
  input: string | null;
  readonly toolCalls: RecordedToolCall[];
  /** The last assistant text of the turn. */
  answer: string;
  /** The typed answer (`final_output` entry), when the turn gave one. */
  output?: unknown;
  readonly usage: TurnUsage;
  /** `finished` once it ended with `turn_end`; else how its last run ended (`errored`, `paused`, …). */
  status: string;
}

/**
 * The turns of a session's line of work (`lineOf`: through compactions and forks), oldest first.
 * A segment forked at turn N continues after N: the source's later turns are another branch's.
 */
export async function readRecordedTurns(store: Store, sessionId: string): Promise<RecordedTurn[]> {
  const overview = await describeSession(store, sessionId);
  const turns: RecordedTurn[] = [];
  for (const segmentId of lineOf(overview)) {
    const entries: Entry[] = [];
    for await (const batch of store.readFrom({ sessionId, segmentId }, 0)) entries.push(...batch);
    foldTurns(entries, turns);
  }
  return turns;
}

/** Folds one segment's entries into `turns` (continuing the turns of the segments before it). */
export function foldTurns(entries: readonly Entry[], turns: RecordedTurn[] = []): RecordedTurn[] {
  const calls = new Map<string, RecordedToolCall>();
  for (const turn of turns) for (const call of turn.toolCalls) calls.set(call.callId, call);
  let current = turns.at(-1);
  let open = false;
  for (const entry of entries) {
    switch (entry.kind) {
      case "segment_start": {
        const cut = entry.forked_from?.at_turn;
        if (cut !== undefined && entry.compacted_from === undefined) {
          while ((turns.at(-1)?.turn ?? 0) > cut) turns.pop();
          current = turns.at(-1);
        }
        break;
      }
      case "invoke":
        // A resumed turn (after a pause or an approval) goes on; anything else starts a turn.
        if (entry.trigger !== "resume" || current === undefined || current.status === "finished") {
          current = newTurn(entry.trigger, (turns.at(-1)?.turn ?? 0) + 1);
          turns.push(current);
        }
        open = true;
        break;
      case "user_input":
        if (current !== undefined && current.input === null) current.input = entry.text;
        break;
      case "llm_usage":
        if (current !== undefined) {
          current.usage.requests += 1;
          current.usage.inputTokens += entry.input_tokens;
          current.usage.cacheReadTokens += entry.cache_read_tokens;
          current.usage.cacheWriteTokens += entry.cache_write_tokens;
          current.usage.outputTokens += entry.output_tokens;
        }
        break;
      case "assistant_item": {
        const item = entry.item as Record<string, unknown>;
        if (current === undefined) break;
        if (item.type === "tool_call") {
          const call: RecordedToolCall = {
            callId: String(item.call_id),
            name: String(item.name),
            arguments: String(item.arguments),
          };
          current.toolCalls.push(call);
          calls.set(call.callId, call);
        } else if (item.type === "message") current.answer = textOf(item);
        break;
      }
      case "tool_result": {
        const item = entry.item as Record<string, unknown>;
        const call = calls.get(String(item.call_id));
        if (call !== undefined) {
          call.result = {
            summary: String(item.summary ?? ""),
            ...(typeof item.content === "string" ? { content: item.content } : {}),
            ...(item.is_error === true ? { is_error: true } : {}),
          };
        }
        break;
      }
      case "extension":
        if (entry.domain === FINAL_OUTPUT_DOMAIN && current !== undefined) {
          current.output = (entry.payload as { value?: unknown }).value;
        }
        break;
      case "turn_end":
        if (current !== undefined) {
          current.turn = entry.turn;
          current.status = "finished";
        }
        break;
      case "run_completed":
        if (current !== undefined && open && current.status !== "finished") current.status = entry.result;
        open = false;
        break;
      case "run_errored":
        if (current !== undefined && open && current.status !== "finished") current.status = "errored";
        open = false;
        break;
      default:
        break;
    }
  }
  return turns;
}

function newTurn(trigger: string, turn: number): RecordedTurn {
  return {
    turn,
    trigger,
    input: null,
    toolCalls: [],
    answer: "",
    usage: { requests: 0, inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 },
    status: "open",
  };
}

function textOf(item: Record<string, unknown>): string {
  const content = item.content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is { type: "text"; text: string } => part?.type === "text")
    .map((part) => part.text)
    .join("");
}
