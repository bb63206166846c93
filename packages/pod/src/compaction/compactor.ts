import type { Item, ModelAdapter, Tool, UsageRecord, WorkerEvent } from "@podkit/llm-worker";
import type { CompactionConfig } from "@podkit/manifest";
import type { HistorySource, SystemItem } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextUpdate } from "../context/context-sections.js";
import { bytesOfItems, estimateTokens } from "../usage/token-estimator.js";
import { type CompactCollection, compactTools } from "./compact-tools.js";
import { type PodConversation, runCompactWorker } from "./compact-worker.js";
import { buildCompactedHistory, type CompactedHistory } from "./compacted-history.js";
import { CompactionOverThresholdError, NothingToCompactError } from "./errors.js";
import { itemLine } from "./item-line.js";
import { findSplitPoint } from "./split-point.js";

export interface CompactInput {
  /** The pod's history in full (what is summarised and kept). */
  readonly items: readonly Item[];
  readonly sources: readonly HistorySource[];
  /** The pod's conversation as its requests carry it: the compaction request continues it. */
  readonly conversation: PodConversation;
  readonly usage: readonly UsageRecord[];
  readonly config: CompactionConfig;
  readonly catalog: PromptCatalog;
  readonly model: ModelAdapter;
  /** The builtin `read_file` on the pod's scope. */
  readonly readFile: Tool;
  /** The current context block, re-committed once into the new segment. */
  readonly context: () => Promise<ContextUpdate | null>;
  /** Attachments carried into the new history after the references (the active skills' bodies). */
  readonly carryOver?: (input: {
    items: readonly Item[];
    sources: readonly HistorySource[];
    split: number;
  }) => readonly SystemItem[];
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
 * Compacts a history without writing anything: split point, the compaction request (the pod's
 * conversation with the instruction appended), the new history, and the size check of the
 * result. The caller writes the new segment only when this resolves.
 */
export async function compactHistory(input: CompactInput): Promise<CompactResult> {
  const { items, sources, config, catalog } = input;
  const { systemPrompt } = input.conversation;
  const tokensBefore = estimateTokens({ systemPrompt, items, usage: input.usage }).tokens;
  // The tail is kept verbatim, tool output included, while a measurement may be of pruned requests:
  // the byte share must not be taken against a count that leaves out bytes the tail will carry.
  const split = findSplitPoint(
    items,
    config.retained_tokens,
    Math.max(tokensBefore, bytesOfItems(items) / 4),
  );
  if (split === 0) throw new NothingToCompactError(items.length, config.retained_tokens);
  const collected: CompactCollection = { summary: undefined, autoRead: [], references: [] };
  const kept = items[split] as Item;
  const summary = await runCompactWorker({
    model: input.model,
    catalog,
    config,
    conversation: input.conversation,
    instruction: catalog.render("compact_system", {
      summary_target_tokens: config.summary_target_tokens,
      summary_max_tokens: config.summary_max_tokens,
      auto_read_budget_tokens: config.auto_read_budget_tokens,
      items: items.length,
      summarised: split,
      retained: items.length - split,
      kept_from: itemLine(
        kept,
        split,
        sources.find((source) => source.index === split),
      ),
    }),
    tools: compactTools({
      items,
      readFile: input.readFile,
      autoReadBudgetTokens: config.auto_read_budget_tokens,
      resultMaxBytes: config.worker_context_max_tokens,
      collected,
    }),
    readFile: input.readFile,
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
    carried: input.carryOver?.({ items, sources, split }) ?? [],
    items,
    sources,
    split,
    context,
  });
  const tokensAfter = estimateTokens({
    systemPrompt,
    items: built.history,
    usage: [],
  }).tokens;
  const limitKey =
    config.threshold <= config.result_context_max_tokens ? "threshold" : "result_context_max_tokens";
  const limit = Math.min(config.threshold, config.result_context_max_tokens);
  if (tokensAfter > limit) throw new CompactionOverThresholdError(tokensBefore, tokensAfter, limit, limitKey);
  return { ...built, tokensBefore, tokensAfter, contextKey: context?.key };
}
