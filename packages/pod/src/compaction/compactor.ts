import type { Item, ModelAdapter, RequestConfig, Tool, UsageRecord, WorkerEvent } from "@podkit/llm-worker";
import type { CompactionConfig } from "@podkit/manifest";
import type { HistorySource } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextUpdate } from "../context/context-sections.js";
import { bytesOfItems, estimateTokens } from "../usage/token-estimator.js";
import { type CompactCollection, compactTools } from "./compact-tools.js";
import { runCompactWorker } from "./compact-worker.js";
import { buildCompactedHistory, type CompactedHistory } from "./compacted-history.js";
import { CompactionOverThresholdError, NothingToCompactError } from "./errors.js";
import { sessionOverview } from "./session-overview.js";
import { findSplitPoint } from "./split-point.js";

export interface CompactInput {
  readonly items: readonly Item[];
  readonly sources: readonly HistorySource[];
  readonly systemPrompt: string | undefined;
  readonly usage: readonly UsageRecord[];
  readonly config: CompactionConfig;
  readonly catalog: PromptCatalog;
  readonly model: ModelAdapter;
  readonly requestConfig: RequestConfig;
  /** The builtin `read_file` on the pod's scope. */
  readonly readFile: Tool;
  /** The current context block, re-committed once into the new segment. */
  readonly context: () => Promise<ContextUpdate | null>;
  readonly signal: AbortSignal;
  /** Receives the compaction worker's events (telemetry: its requests as `chat` spans). */
  readonly onWorkerEvent?: (event: WorkerEvent) => void;
}

export interface CompactResult extends CompactedHistory {
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** Key of the context block in the new history (undefined: no block). */
  readonly contextKey: string | undefined;
}

/**
 * Compacts a history without writing anything: split point, bounded overview, the
 * disposable compaction worker, the new history, and the size check of the result. The caller
 * writes the new segment only when this resolves.
 */
export async function compactHistory(input: CompactInput): Promise<CompactResult> {
  const { items, sources, config, catalog } = input;
  const tokensBefore = estimateTokens({ systemPrompt: input.systemPrompt, items, usage: input.usage }).tokens;
  // The tail is kept verbatim, tool output included, while a measurement may be of pruned requests:
  // the byte share must not be taken against a count that leaves out bytes the tail will carry.
  const split = findSplitPoint(
    items,
    config.retained_tokens,
    Math.max(tokensBefore, bytesOfItems(items) / 4),
  );
  if (split === 0) throw new NothingToCompactError(items.length, config.retained_tokens);
  // Tokens → bytes (×4): half the compaction worker's window for the overview, a quarter per tool result.
  const overview = sessionOverview(
    items.slice(0, split),
    sources.filter((source) => source.index < split),
    config.worker_context_max_tokens * 2,
    catalog,
  );
  const collected: CompactCollection = { summary: undefined, autoRead: [], references: [] };
  const summary = await runCompactWorker({
    model: input.model,
    catalog,
    config,
    requestConfig: input.requestConfig,
    input: catalog.render("compact_overview", { overview, items: split, retained: items.length - split }),
    tools: compactTools({
      items,
      readFile: input.readFile,
      autoReadBudgetTokens: config.auto_read_budget_tokens,
      resultMaxBytes: config.worker_context_max_tokens,
      collected,
    }),
    collected,
    signal: input.signal,
    ...(input.onWorkerEvent === undefined ? {} : { onWorkerEvent: input.onWorkerEvent }),
  });
  const context = await input.context();
  const built = buildCompactedHistory({
    catalog,
    summary,
    autoRead: collected.autoRead,
    references: collected.references,
    items,
    sources,
    split,
    context,
  });
  const tokensAfter = estimateTokens({
    systemPrompt: input.systemPrompt,
    items: built.history,
    usage: [],
  }).tokens;
  const limitKey =
    config.threshold <= config.result_context_max_tokens ? "threshold" : "result_context_max_tokens";
  const limit = Math.min(config.threshold, config.result_context_max_tokens);
  if (tokensAfter > limit) throw new CompactionOverThresholdError(tokensBefore, tokensAfter, limit, limitKey);
  return { ...built, tokensBefore, tokensAfter, contextKey: context?.key };
}
