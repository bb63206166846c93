import type { Item } from "../items/item.js";
import type { UsageRecord } from "./usage.js";

/** Everything a worker reports while it runs, for display and telemetry (never for persistence). */
export type WorkerEvent =
  | { type: "run_start"; mode: "run" | "resume" }
  | { type: "request_start"; turn: number; attempt: number; continuation: number }
  | { type: "retry"; attempt: number; delayMs: number; error: Error }
  | { type: "continuation"; continuation: number; error: Error }
  | { type: "text_delta"; delta: string }
  | { type: "reasoning_delta"; delta: string }
  | { type: "tool_call_start"; callId: string; name: string; arguments: string }
  | { type: "tool_call_end"; callId: string; name: string; summary: string; isError: boolean }
  | { type: "item_committed"; item: Item }
  | { type: "usage"; usage: UsageRecord }
  | { type: "turn_end"; turn: number }
  | { type: "warning"; message: string }
  | { type: "run_end"; result: RunResult | undefined; error?: Error };

export type RunStatus = "finished" | "paused" | "limit_reached" | "yielded";

/** How a run ended. */
export interface RunResult {
  status: RunStatus;
  /** Model requests made in this run. */
  turns: number;
  /** The text of the last assistant message of the run, if any. */
  text: string;
}

export type WorkerEventListener = (event: WorkerEvent) => void;
