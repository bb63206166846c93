import type { Item, ModelAdapter, RequestConfig, WorkerEvent } from "@podkit/llm-worker";
import type { MemoryConfig } from "@podkit/manifest";
import type { Entry } from "@podkit/session-store";
import { runMemoryConsolidation } from "../consolidate/run-consolidation.js";
import { type ExtractPassResult, runExtractPass } from "../extract/extract-pass.js";
import { clearSessionMark, leftByDeadProcess, markSessionOpen } from "../extract/open-sessions.js";
import { memoryPaths } from "../records/layout.js";
import type { MemoryPrompts } from "../worker/memory-model.js";
import { sessionOfContext } from "./job-session.js";

/**
 * A memory job's progress, as the pod reports it: a `PodEvent` of type `job_progress` (a copy of
 * `JobProgressEvent` of `@podkit/pod`, narrowed to memory's job names; test/pod-interfaces.test.ts
 * pins the copies to the pod's types).
 */
export interface MemoryJobEvent {
  type: "job_progress";
  job: "memory_extract" | "memory_consolidate";
  status: "start" | "done" | "failed";
  /** What it did (`staged 3 items`, `lock_in_use`, …). */
  detail?: string;
  error?: Error;
}

/** What the pod gives an after-turn job: the head segment, its extension state, its writer. */
export interface AfterTurnJobContext {
  readonly sessionId: string;
  readonly segmentId: string;
  readonly signal: AbortSignal;
  /** True in the final pass `pod.close()` runs for `runOnClose` jobs. */
  readonly final: boolean;
  /** The folded state of an `extension` domain (undefined: none yet). */
  extension(domain: string): unknown;
  /** The committed entries of the head segment, or of another segment of the session by id. */
  readEntries(segmentId?: string): AsyncIterable<Entry<Item>>;
  /**
   * The store's incremental read, when the pod offers it: entries of a segment at index ≥ `from`,
   * in batches. Without it a pass reads the segment whole and skips what it does not need.
   */
  readFrom?(
    ref: { sessionId: string; segmentId: string },
    from: number,
  ): AsyncIterable<readonly Entry<Item>[]>;
  /** Appends an `extension` entry through the pod's own session writer (the one-writer rule). */
  appendExtension(domain: string, payload: unknown): Promise<void>;
  emit(event: MemoryJobEvent): void;
  /** Passes on an event of the job's own worker (the pod's telemetry: `chat` spans under the job's span). */
  onWorkerEvent?(job: string, event: WorkerEvent): void;
}

interface MemoryJobSetup {
  workspace: string;
  model: ModelAdapter;
  prompts: MemoryPrompts;
  language: string;
  memory: MemoryConfig;
  config?: RequestConfig;
  clock?: () => Date;
  onJob?: (event: MemoryJobEvent) => void;
}

/**
 * The after-turn job of a pod with memory: extract when the tokens added since the pointer reach
 * `extract_threshold` (the pointer advances only on success; tails compaction left behind are
 * extracted first), then consolidate when staging is past its thresholds. `runOnClose` is the
 * final pass of a closing pod: the session's tail, whatever its size, and no consolidation. A
 * failure is reported as a `failed` event and rethrown for the pod to turn into a warning; it
 * never touches the turn.
 */
export function createMemoryJob(setup: MemoryJobSetup) {
  const paths = memoryPaths(setup.workspace);
  /** Sessions this job marked open (see `open-sessions.ts`). */
  const opened = new Set<string>();
  /**
   * On the first pass over a session: whether a process that died left it (its tail is then
   * extracted whatever the threshold), and the mark that this process has it open — removed
   * when the pod closes (its signal fires) or by `runOnClose`.
   */
  const firstPass = async (ctx: AfterTurnJobContext): Promise<boolean> => {
    if (opened.has(ctx.sessionId)) return false;
    opened.add(ctx.sessionId);
    const catchUp = await leftByDeadProcess(paths, ctx.sessionId);
    await markSessionOpen(paths, ctx.sessionId);
    const clear = () => void clearSessionMark(paths, ctx.sessionId).catch(() => {});
    // A pod closed while this pass started: its signal fired already and fires no more.
    if (ctx.signal.aborted) clear();
    else ctx.signal.addEventListener("abort", clear, { once: true });
    return catchUp;
  };
  const emitter = (ctx: AfterTurnJobContext) => (event: Omit<MemoryJobEvent, "type">) => {
    const full: MemoryJobEvent = { type: "job_progress", ...event };
    ctx.emit(full);
    setup.onJob?.(full);
  };
  const optionsOf = (ctx: AfterTurnJobContext) => ({
    workspace: setup.workspace,
    model: setup.model,
    prompts: setup.prompts,
    language: setup.language,
    signal: ctx.signal,
    ...(setup.config === undefined ? {} : { config: setup.config }),
    ...(setup.clock === undefined ? {} : { clock: setup.clock }),
  });
  const extract = async (ctx: AfterTurnJobContext, force: boolean): Promise<void> => {
    const emit = emitter(ctx);
    let started = false;
    try {
      const result = await runExtractPass(
        withWorkerEvents(optionsOf(ctx), ctx, "memory_extract"),
        sessionOfContext(ctx),
        {
          threshold: setup.memory.extract_threshold,
          force,
          onStart: () => {
            started = true;
            emit({ job: "memory_extract", status: "start" });
          },
        },
      );
      if (started) emit({ job: "memory_extract", status: "done", detail: extractDetail(result) });
    } catch (error) {
      if (!started) emit({ job: "memory_extract", status: "start" });
      emit({ job: "memory_extract", status: "failed", error: error as Error });
      throw error;
    }
  };
  return {
    name: "memory",
    runOnClose: true,
    async run(ctx: AfterTurnJobContext): Promise<void> {
      // The final pass of a closing pod: the session's tail, whatever its size; no consolidation.
      if (ctx.final) {
        await extract(ctx, true);
        await clearSessionMark(paths, ctx.sessionId);
        return;
      }
      const emit = emitter(ctx);
      await extract(ctx, await firstPass(ctx));
      try {
        const result = await runMemoryConsolidation({
          ...withWorkerEvents(optionsOf(ctx), ctx, "memory_consolidate"),
          thresholdFiles: setup.memory.consolidation_threshold_files,
          thresholdBytes: setup.memory.consolidation_threshold_bytes,
          gitCommit: setup.memory.git_commit,
          onStart: () => emit({ job: "memory_consolidate", status: "start" }),
        });
        const detail = consolidationDetail(result);
        if (detail !== undefined) emit({ job: "memory_consolidate", ...detail });
      } catch (error) {
        emit({ job: "memory_consolidate", status: "failed", error: error as Error });
        throw error;
      }
    },
  };
}

function extractDetail(result: ExtractPassResult): string {
  const parts = result.outcomes.map((o) => (o.status === "extracted" ? `staged ${o.staging.id}` : o.status));
  return parts.length === 0 ? "nothing_new" : parts.join(", ");
}

/** The event a consolidation result is reported as (none when it was not due). */
function consolidationDetail(
  result: Awaited<ReturnType<typeof runMemoryConsolidation>>,
): Pick<MemoryJobEvent, "status" | "detail"> | undefined {
  const recovered =
    result.status !== "lock_in_use" && result.recovered !== undefined
      ? `; finished the interrupted run ${result.recovered.runId}`
      : "";
  switch (result.status) {
    case "consolidated":
      return {
        status: "done",
        detail: `${result.changes.length} changes from ${result.consumed.length} staging files${result.tidy.status === "incomplete" ? `; tidy step incomplete (${result.tidy.reason}), its changes were dropped` : ""}${recovered}`,
      };
    case "invalid_staging":
      return {
        status: "failed",
        detail: `skipped: no valid staging file (${result.invalidStaging.map((f) => `${f.file}: ${f.problem}`).join("; ")}); fix or delete them`,
      };
    case "lock_in_use":
      return { status: "done", detail: `skipped: lock_in_use (pid ${result.holder.pid})` };
    case "backing_off":
      return {
        status: "done",
        detail: `skipped: backing off after ${result.failures} failed runs on the same staging (last: ${result.lastError}); next try after ${result.retryAt.toISOString()}`,
      };
    case "below_threshold":
      return recovered === "" ? undefined : { status: "done", detail: recovered.slice(2) };
  }
}

/** The job options with the worker's events passed on to the pod (when it takes them). */
function withWorkerEvents<T extends object>(
  options: T,
  ctx: AfterTurnJobContext,
  job: MemoryJobEvent["job"],
): T & { onWorkerEvent?: (event: WorkerEvent) => void } {
  const forward = ctx.onWorkerEvent;
  if (forward === undefined) return options;
  return { ...options, onWorkerEvent: (event: WorkerEvent) => forward.call(ctx, job, event) };
}
