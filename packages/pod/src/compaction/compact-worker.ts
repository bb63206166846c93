import {
  type ModelAdapter,
  type RequestConfig,
  type Tool,
  ToolServer,
  Worker,
  type WorkerEvent,
} from "@podkit/llm-worker";
import type { CompactionConfig } from "@podkit/manifest";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { CompactCollection } from "./compact-tools.js";
import { CompactSummaryMissingError, CompactSummaryOversizeError } from "./errors.js";

export interface CompactWorkerInput {
  readonly model: ModelAdapter;
  readonly catalog: PromptCatalog;
  readonly config: CompactionConfig;
  readonly requestConfig: RequestConfig;
  /** The worker's first input (`compact_overview`). */
  readonly input: string;
  readonly tools: readonly Tool[];
  readonly collected: CompactCollection;
  readonly signal: AbortSignal;
  /** Receives the worker's events (telemetry: its requests as `chat` spans). */
  readonly onWorkerEvent?: (event: WorkerEvent) => void;
}

const summaryTokens = (summary: string) => Math.ceil(Buffer.byteLength(summary) / 4);

/**
 * Runs the disposable compaction worker: its own `Worker` with `compact_system` and the
 * compaction tools, nothing persisted. No summary → one nudge (`compact_nudge_missing_summary`),
 * then `CompactSummaryMissingError`; a summary over `summary_max_tokens` → one rewrite request,
 * then `CompactSummaryOversizeError`. Resolves with the summary (the last `write_summary` call).
 */
export async function runCompactWorker(input: CompactWorkerInput): Promise<string> {
  const { catalog, config, collected, signal } = input;
  const tools = new ToolServer();
  for (const tool of input.tools) tools.registerTool(tool);
  const worker = new Worker({
    model: input.model,
    tools,
    config: input.requestConfig,
    maxRequests: config.worker_max_turns,
    systemPrompt: catalog.render("compact_system", {
      summary_target_tokens: config.summary_target_tokens,
      summary_max_tokens: config.summary_max_tokens,
      auto_read_budget_tokens: config.auto_read_budget_tokens,
    }),
  });
  if (input.onWorkerEvent !== undefined) worker.subscribe(input.onWorkerEvent);
  let requests = (await worker.run(input.input, { signal })).requests;
  if (collected.summary === undefined) {
    requests += (await worker.run(catalog.render("compact_nudge_missing_summary"), { signal })).requests;
    if (collected.summary === undefined) throw new CompactSummaryMissingError(requests);
  }
  const first = summaryTokens(collected.summary);
  if (first > config.summary_max_tokens) {
    const rewrite = catalog.render("compact_rewrite_oversize_summary", {
      summary_tokens: first,
      summary_max_tokens: config.summary_max_tokens,
    });
    await worker.run(rewrite, { signal });
    const second = summaryTokens(collected.summary);
    if (second > config.summary_max_tokens)
      throw new CompactSummaryOversizeError(second, config.summary_max_tokens);
  }
  return collected.summary;
}
