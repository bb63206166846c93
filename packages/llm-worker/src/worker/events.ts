import type { Item } from "../items/item.js";
import type { StopReason } from "../stream/stop-reason.js";
import type { UsageRecord } from "./usage.js";

/**
 * Everything a worker reports while it runs, for display and telemetry (never for persistence).
 * A *request* is one model call; `request` counts them within the run, from 1.
 */
export type WorkerEvent =
  | { type: "run_start"; mode: "run" | "resume" }
  | { type: "request_start"; request: number; attempt: number; continuation: number }
  | { type: "retry"; attempt: number; delayMs: number; error: Error }
  | { type: "continuation"; continuation: number; error: Error }
  | { type: "text_delta"; delta: string }
  | { type: "reasoning_delta"; delta: string }
  /**
   * A piece of a client tool call's arguments (JSON text) as the model streams them: the pieces
   * add up to the call's arguments, all before its `tool_call_start` (one piece when the provider
   * sends them whole). A provider-executed call gets none.
   */
  | { type: "tool_input_delta"; callId: string; name: string; delta: string }
  | { type: "tool_call_start"; callId: string; name: string; arguments: string }
  /** `error` is what the tool threw, when its error result came from an exception. */
  | {
      type: "tool_call_end";
      callId: string;
      name: string;
      summary: string;
      isError: boolean;
      error?: Error;
    }
  /** A tool call the stream began but never finished; it was dropped and did not run. */
  | { type: "tool_call_dropped"; request: number; callId: string; name: string }
  | { type: "item_committed"; item: Item }
  | { type: "usage"; usage: UsageRecord }
  /**
   * One model request ended (after its items were committed), with why the model stopped and the
   * model and response id the provider reported (undefined when its stream carried none).
   */
  | {
      type: "request_end";
      request: number;
      stopReason: StopReason;
      responseModel: string | undefined;
      responseId: string | undefined;
    }
  /** The final answer was cut off (`length`) or filtered (`content-filter`); `text` is what arrived. */
  | { type: "answer_truncated"; request: number; stopReason: StopReason; text: string }
  | { type: "warning"; message: string }
  | { type: "run_end"; result: RunResult | undefined; error?: Error };

/** How a run ended (the session log's `run_completed.result` uses the same union). */
export type RunStatus = "finished" | "paused" | "limit_reached" | "yielded" | "awaiting_approval";

/** The outcome of one `run()`/`resume()` call. */
export interface RunResult {
  status: RunStatus;
  /** Model requests made in this run. */
  requests: number;
  /** The text of the last assistant response of the run ("" when it had none). */
  text: string;
  /**
   * Why the model stopped on the last request of the run; undefined when the run made none
   * (yielded or paused before its first request). `length` or `content-filter` on a finished
   * run means the answer in `text` is incomplete.
   */
  stopReason: StopReason | undefined;
}

export type WorkerEventListener = (event: WorkerEvent) => void;
