import { AbortedError, CancelledError } from "../errors.js";
import type { ToolCallItem, ToolResultItem } from "../items/item.js";
import type { MediaRef, ToolMedia } from "../media/media-ref.js";
import type { ToolOutput } from "../tools/tool.js";
import { type ToolServer, thrownByTool } from "../tools/tool-server.js";
import type { WorkerEvent } from "./events.js";
import type { Interceptor } from "./interceptor.js";

export interface ToolBatchContext {
  tools: ToolServer;
  interceptor: Interceptor;
  signal: AbortSignal;
  emit(event: WorkerEvent): void;
  /**
   * Stores a result's media (the worker's `MediaStore`): the references the result carries, and
   * notes for the parts the store refused. Without it, media are dropped.
   */
  storeMedia?(
    call: ToolCallItem,
    media: readonly ToolMedia[],
  ): Promise<{ refs: MediaRef[]; notes: string[] }>;
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

/**
 * A batch's results in call order; `cancelled` when `postToolCall` aborted after the tools ran;
 * `awaiting` when some call's tool said its answer waits for an approval elsewhere (those calls
 * have no result here, the others do).
 */
export interface ToolBatchOutcome {
  results: ToolResultItem[];
  cancelled?: CancelledError;
  awaiting?: true;
}

/**
 * A rewrite usually changes one field and passes the other back as it saw it (capped). Those
 * unchanged fields get their original text again, so the joint cap is applied once to the
 * whole output and no truncation notice is ever stacked on another.
 */
function uncapUnchanged(rewritten: ToolOutput, seen: ToolResultItem, original: ToolOutput): ToolOutput {
  const output: ToolOutput = { ...rewritten };
  if (rewritten.summary === seen.summary) output.summary = original.summary;
  if (rewritten.content !== undefined && rewritten.content === seen.content)
    output.content = original.content;
  return output;
}

/**
 * Runs one batch of tool calls and returns their results in call order, or `"paused"` when
 * `preToolCall` asked to pause, or `"awaiting_approval"` when it said a call awaits approval
 * (every call of the batch is asked first, so each one that awaits an answer is known; nothing
 * runs). `preToolCall` is asked for every call first (in order; deny
 * gives a synthetic error result, abort throws `CancelledError` before anything ran), then the
 * allowed calls run in parallel, then `postToolCall` may rewrite each result. A `postToolCall`
 * abort comes back as `cancelled` with every result (the tools ran; their effects are real), so
 * the caller commits them before stopping. A tool that answers `awaiting_approval` (its answer
 * waits for an approval made elsewhere) leaves its call without a result and marks the outcome
 * `awaiting`: the caller commits the other results and ends the run `awaiting_approval`. Nothing is
 * committed here; on an abort signal no result exists, and the calls stay unanswered for the next run.
 */
export async function executeToolBatch(
  calls: readonly ToolCallItem[],
  ctx: ToolBatchContext,
): Promise<ToolBatchOutcome | "paused" | "awaiting_approval"> {
  const denied = new Map<string, ToolOutput>();
  let awaiting = false;
  for (const call of calls) {
    const decision = (await ctx.interceptor.preToolCall?.(call)) ?? { action: "continue" };
    if (decision.action === "abort") throw new CancelledError(decision.reason);
    if (decision.action === "pause") return "paused";
    if (decision.action === "await_approval") awaiting = true;
    if (decision.action === "deny") {
      denied.set(call.call_id, { summary: `tool call denied: ${decision.reason}`, is_error: true });
    }
  }
  if (awaiting) return "awaiting_approval";
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
        const output = await ctx.tools.executeUncapped(call, ctx.signal);
        const thrown = thrownByTool(output);
        ctx.emit({
          type: "tool_call_end",
          callId: call.call_id,
          name: call.name,
          summary: output.summary,
          isError: output.is_error === true,
          ...(thrown === undefined ? {} : { error: thrown }),
        });
        return output;
      }),
    ),
    ctx.signal,
  );
  // A call whose tool waits for an approval elsewhere gets no result now: resume() runs it again.
  const answered = calls.flatMap((call, index) =>
    (outputs[index] as ToolOutput).awaiting_approval === true
      ? []
      : [{ call, output: outputs[index] as ToolOutput }],
  );
  const suspended = answered.length < calls.length ? ({ awaiting: true } as const) : {};
  const results = answered.map(({ call, output }) => toResultItem(call, ctx.tools.cap(call.name, output)));
  // The media each result goes out with: the tool's, or a rewrite's when it names any.
  const media = answered.map(({ output }) => output.media);
  for (const [index, { call, output }] of answered.entries()) {
    const result = results[index] as ToolResultItem;
    const decision = (await ctx.interceptor.postToolCall?.(call, result, output)) ?? { action: "continue" };
    if (decision.action === "abort") {
      await attachMedia(answered, results, media, ctx);
      return { results, cancelled: new CancelledError(decision.reason), ...suspended };
    }
    if (decision.action === "rewrite") {
      const rewritten = uncapUnchanged(decision.result, result, output);
      results[index] = toResultItem(call, ctx.tools.cap(call.name, rewritten));
      if (decision.result.media !== undefined) media[index] = decision.result.media;
    }
  }
  await attachMedia(answered, results, media, ctx);
  return { results, ...suspended };
}

/**
 * Stores each result's media through the worker's store, in call order (a per-turn budget is then
 * spent in the order the model asked), before anything is committed: the result carries the
 * references, and the summary the notes of parts the store refused.
 */
async function attachMedia(
  answered: readonly { call: ToolCallItem }[],
  results: ToolResultItem[],
  media: readonly (readonly ToolMedia[] | undefined)[],
  ctx: ToolBatchContext,
): Promise<void> {
  for (const [index, { call }] of answered.entries()) {
    const parts = media[index];
    if (parts === undefined || parts.length === 0 || ctx.storeMedia === undefined) continue;
    const { refs, notes } = await ctx.storeMedia(call, parts);
    const result = results[index] as ToolResultItem;
    const item: ToolResultItem = { ...result };
    if (notes.length > 0) item.summary = `${result.summary}\n${notes.join("\n")}`;
    if (refs.length > 0) item.media = refs;
    results[index] = item;
  }
}
