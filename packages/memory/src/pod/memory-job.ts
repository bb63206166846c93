import type { Item, ModelAdapter, RequestConfig, WorkerEvent } from "@podkit/llm-worker";
import type { MemoryConfig } from "@podkit/manifest";
import type { Entry } from "@podkit/session-store";
import { runMemoryConsolidation } from "../consolidate/run-consolidation.js";
import { estimateTokens } from "../extract/flat-lines.js";
import { EXTRACT_POINTER_DOMAIN, extractStart } from "../extract/pointer.js";
import { extractSlice } from "../extract/run-extract.js";
import type { MemoryPrompts } from "../worker/memory-model.js";

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
  /** The folded state of an `extension` domain (undefined: none yet). */
  extension(domain: string): unknown;
  /** The committed entries of the head segment. */
  readEntries(): AsyncIterable<Entry<Item>>;
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
 * `extract_threshold` (the pointer advances only on success), then consolidate when staging is
 * past its thresholds. A failure is reported as a `failed` event and rethrown for the pod to turn
 * into a warning; it never touches the turn.
 */
export function createMemoryJob(setup: MemoryJobSetup) {
  return {
    name: "memory",
    async run(ctx: AfterTurnJobContext): Promise<void> {
      const emit = (event: Omit<MemoryJobEvent, "type">) => {
        const full: MemoryJobEvent = { type: "job_progress", ...event };
        ctx.emit(full);
        setup.onJob?.(full);
      };
      const options = {
        workspace: setup.workspace,
        model: setup.model,
        prompts: setup.prompts,
        language: setup.language,
        signal: ctx.signal,
        ...(setup.config === undefined ? {} : { config: setup.config }),
        ...(setup.clock === undefined ? {} : { clock: setup.clock }),
      };
      const start = extractStart(ctx.extension(EXTRACT_POINTER_DOMAIN), ctx.segmentId);
      const entries: Entry<Item>[] = [];
      let index = 0;
      for await (const entry of ctx.readEntries()) if (index++ >= start) entries.push(entry);
      if (entries.length > 0 && estimateTokens(entries) >= setup.memory.extract_threshold) {
        emit({ job: "memory_extract", status: "start" });
        try {
          const outcome = await extractSlice(withWorkerEvents(options, ctx, "memory_extract"), {
            sessionId: ctx.sessionId,
            segmentId: ctx.segmentId,
            start,
            entries,
          });
          await ctx.appendExtension(EXTRACT_POINTER_DOMAIN, outcome.pointer);
          emit({
            job: "memory_extract",
            status: "done",
            detail: outcome.status === "extracted" ? `staged ${outcome.staging.id}` : outcome.status,
          });
        } catch (error) {
          emit({ job: "memory_extract", status: "failed", error: error as Error });
          throw error;
        }
      }
      try {
        const result = await runMemoryConsolidation({
          ...withWorkerEvents(options, ctx, "memory_consolidate"),
          thresholdFiles: setup.memory.consolidation_threshold_files,
          thresholdBytes: setup.memory.consolidation_threshold_bytes,
          gitCommit: setup.memory.git_commit,
          onStart: () => emit({ job: "memory_consolidate", status: "start" }),
        });
        if (result.status === "consolidated") {
          emit({
            job: "memory_consolidate",
            status: "done",
            detail: `${result.changes.length} changes from ${result.consumed.length} staging files`,
          });
        } else if (result.status === "invalid_staging") {
          const files = result.invalidStaging.map((f) => `${f.file}: ${f.problem}`).join("; ");
          emit({
            job: "memory_consolidate",
            status: "failed",
            detail: `skipped: no valid staging file (${files}); fix or delete them`,
          });
        } else if (result.status === "lock_in_use") {
          emit({
            job: "memory_consolidate",
            status: "done",
            detail: `skipped: lock_in_use (pid ${result.holder.pid})`,
          });
        }
      } catch (error) {
        emit({ job: "memory_consolidate", status: "failed", error: error as Error });
        throw error;
      }
    },
  };
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
