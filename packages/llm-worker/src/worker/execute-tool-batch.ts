import { AbortedError, CancelledError } from "../errors.js";
import type { ToolCallItem, ToolResultItem } from "../items/item.js";
import type { ToolOutput } from "../tools/tool.js";
import type { ToolServer } from "../tools/tool-server.js";
import type { WorkerEvent } from "./events.js";
import type { Interceptor } from "./interceptor.js";

export interface ToolBatchContext {
  tools: ToolServer;
  interceptor: Interceptor;
  signal: AbortSignal;
  emit(event: WorkerEvent): void;
}

/** Resolves with `promise`, or rejects with `AbortedError` as soon as `signal` fires. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new AbortedError(undefined, { cause: signal.reason }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortedError(undefined, { cause: signal.reason }));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(signal.aborted ? new AbortedError(undefined, { cause: signal.reason }) : error);
      },
    );
  });
}

function toResultItem(call: ToolCallItem, output: ToolOutput): ToolResultItem {
  const item: ToolResultItem = { type: "tool_result", call_id: call.call_id, summary: output.summary };
  if (output.content !== undefined) item.content = output.content;
  if (output.is_error) item.is_error = true;
  return item;
}

/** Caps the fields a rewrite changed; unchanged ones were capped already (capping twice would stack notices). */
function capRewritten(
  tools: ToolServer,
  name: string,
  before: ToolResultItem,
  after: ToolOutput,
): ToolOutput {
  const capped = tools.cap(name, after);
  const output: ToolOutput = { summary: after.summary === before.summary ? after.summary : capped.summary };
  if (after.content !== undefined)
    output.content = after.content === before.content ? after.content : capped.content;
  if (after.is_error) output.is_error = true;
  return output;
}

/**
 * Runs one batch of tool calls and returns their results in call order, or `"paused"` when
 * `preToolCall` asked to pause. `preToolCall` is asked for every call first (in order; deny
 * gives a synthetic error result, abort throws `CancelledError`), then the allowed calls run
 * in parallel, then `postToolCall` may rewrite each result. Nothing is committed here: on
 * abort or cancellation no result exists, and the calls stay unanswered for the next run.
 */
export async function executeToolBatch(
  calls: readonly ToolCallItem[],
  ctx: ToolBatchContext,
): Promise<ToolResultItem[] | "paused"> {
  const denied = new Map<string, ToolOutput>();
  for (const call of calls) {
    const decision = (await ctx.interceptor.preToolCall?.(call)) ?? { action: "continue" };
    if (decision.action === "abort") throw new CancelledError(decision.reason);
    if (decision.action === "pause") return "paused";
    if (decision.action === "deny") {
      denied.set(call.call_id, { summary: `tool call denied: ${decision.reason}`, is_error: true });
    }
  }
  const outputs = await raceAbort(
    Promise.all(
      calls.map(async (call) => {
        const deniedOutput = denied.get(call.call_id);
        if (deniedOutput) return deniedOutput;
        ctx.emit({
          type: "tool_call_start",
          callId: call.call_id,
          name: call.name,
          arguments: call.arguments,
        });
        const output = await ctx.tools.execute(call, ctx.signal);
        ctx.emit({
          type: "tool_call_end",
          callId: call.call_id,
          name: call.name,
          summary: output.summary,
          isError: output.is_error === true,
        });
        return output;
      }),
    ),
    ctx.signal,
  );
  const results: ToolResultItem[] = [];
  for (const [index, call] of calls.entries()) {
    let result = toResultItem(call, outputs[index] as ToolOutput);
    const decision = (await ctx.interceptor.postToolCall?.(call, result)) ?? { action: "continue" };
    if (decision.action === "abort") throw new CancelledError(decision.reason);
    if (decision.action === "rewrite")
      result = toResultItem(call, capRewritten(ctx.tools, call.name, result, decision.result));
    results.push(result);
  }
  return results;
}
