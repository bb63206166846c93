import { type RunResult, type Tool, ToolServer, Worker } from "@podkit/llm-worker";
import { MemoryWorkerError } from "../errors.js";
import { DEFAULT_MEMORY_WORKER_CONFIG, type MemoryJobOptions } from "./memory-model.js";

/**
 * Runs a throw-away worker (extract or consolidation): its own system prompt, its own tools, one
 * user input, no persistence. A run that does not finish, or fails, is a `MemoryWorkerError`.
 */
export async function runDisposableWorker(
  job: "extract" | "consolidate",
  options: MemoryJobOptions,
  setup: { systemPrompt: string; tools: readonly Tool[]; input: string; maxRequests: number },
): Promise<RunResult> {
  const tools = new ToolServer();
  for (const tool of setup.tools) tools.registerTool(tool);
  const worker = new Worker({
    model: options.model,
    systemPrompt: setup.systemPrompt,
    tools,
    config: options.config ?? DEFAULT_MEMORY_WORKER_CONFIG,
    maxRequests: setup.maxRequests,
    cache: { enabled: true },
    ...(options.retry === undefined ? {} : { retry: options.retry }),
  });
  if (options.onWorkerEvent !== undefined) worker.subscribe(options.onWorkerEvent);
  let result: RunResult;
  try {
    result = await worker.run(setup.input, options.signal === undefined ? {} : { signal: options.signal });
  } catch (error) {
    throw new MemoryWorkerError(job, `the memory ${job} worker failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (result.status !== "finished") {
    throw new MemoryWorkerError(
      job,
      `the memory ${job} worker stopped with "${result.status}" after ${setup.maxRequests} requests at most; nothing of this run was kept`,
    );
  }
  return result;
}
