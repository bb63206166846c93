import { type RunResult, type Tool, ToolServer, Worker } from "@podkit/llm-worker";
import { MemoryWorkerError } from "../errors.js";
import { DEFAULT_MEMORY_WORKER_CONFIG, type MemoryJobOptions } from "./memory-model.js";

/** A throw-away worker whose every run must finish; one conversation across its runs. */
export interface DisposableWorker {
  /** Sends `input` and runs until the model stops, within `maxRequests`; `MemoryWorkerError` when it does not finish. */
  run(input: string, maxRequests: number): Promise<RunResult>;
}

/**
 * A throw-away worker (extract or consolidation): its own system prompt, its own tools, no
 * persistence. Consolidation runs it twice — the integration step, then the tidy step in the
 * same conversation — so each step can fail on its own.
 */
export function disposableWorker(
  job: "extract" | "consolidate",
  options: MemoryJobOptions,
  setup: { systemPrompt: string; tools: readonly Tool[] },
): DisposableWorker {
  const tools = new ToolServer();
  for (const tool of setup.tools) tools.registerTool(tool);
  const worker = new Worker({
    model: options.model,
    systemPrompt: setup.systemPrompt,
    tools,
    config: options.config ?? DEFAULT_MEMORY_WORKER_CONFIG,
    cache: { enabled: true },
    ...(options.retry === undefined ? {} : { retry: options.retry }),
  });
  if (options.onWorkerEvent !== undefined) worker.subscribe(options.onWorkerEvent);
  return {
    async run(input, maxRequests) {
      let result: RunResult;
      try {
        result = await worker.run(input, {
          maxRequests,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        });
      } catch (error) {
        throw new MemoryWorkerError(job, `the memory ${job} worker failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      if (result.status !== "finished") {
        throw new MemoryWorkerError(
          job,
          `the memory ${job} worker stopped with "${result.status}" after ${maxRequests} requests at most`,
        );
      }
      return result;
    },
  };
}

/** One run of a disposable worker (the extract). */
export function runDisposableWorker(
  job: "extract" | "consolidate",
  options: MemoryJobOptions,
  setup: { systemPrompt: string; tools: readonly Tool[]; input: string; maxRequests: number },
): Promise<RunResult> {
  return disposableWorker(job, options, setup).run(setup.input, setup.maxRequests);
}
