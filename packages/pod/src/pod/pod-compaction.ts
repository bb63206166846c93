import {
  AbortedError,
  type Item,
  type MediaRef,
  type ModelAdapter,
  mediaLabel,
  type PreRequestContext,
  type PreRequestDecision,
  type Tool,
  type Worker,
  type WorkerEvent,
} from "@podkit/llm-worker";
import { type CompactionConfig, defaultCompactionConfig } from "@podkit/manifest";
import type { HistorySource, SessionLog, SystemItem } from "@podkit/session-store";
import { builtinToolPackage, createSandbox } from "@podkit/tools";
import { refusedCompactTools } from "../compaction/compact-tools.js";
import type { PodConversation } from "../compaction/compact-worker.js";
import { compactHistory } from "../compaction/compactor.js";
import { planPrune, prunedItems } from "../compaction/prune.js";
import type { ContextUpdate } from "../context/context-sections.js";
import { estimateTokens } from "../usage/token-estimator.js";
import type { CompactionOutcome, CompactionReason, PodEvent } from "./events.js";
import { podModelAdapter } from "./model.js";
import type { PodFoundation } from "./pod-foundation.js";
import type { PodOptions } from "./pod-options.js";
import type { TurnState } from "./turn-state.js";
import type { UsageLedger } from "./usage-ledger.js";

/** Consecutive failed automatic compactions after which compaction is off for the pod's life. */
export const COMPACTION_BREAKER_LIMIT = 3;

/** The `extension` domain recording the prune boundary, so a restored pod sends the same requests. */
export const PRUNE_DOMAIN = "pod.prune";

/** How a compaction reports: its pod events, and its worker's events (telemetry). */
export interface CompactionReporting {
  emit(event: PodEvent): void;
  workerEvent(event: WorkerEvent): void;
}

/** One compaction of the head segment, as the pod's engine asks for it. */
export interface CompactionRequest {
  /** The head segment now. */
  readonly log: SessionLog<Item>;
  readonly signal: AbortSignal;
  readonly reporting: CompactionReporting;
  /** The current context block, re-committed once into the new segment. */
  contextBlock(): Promise<ContextUpdate | null>;
  /** Attachments carried into the new history once the split is known (the active skills' bodies). */
  carryOver?(input: CarryOverInput): readonly SystemItem[];
  /** Continues in the compacted segment (before `compaction_done` is reported). */
  moveTo(next: SessionLog<Item>, contextKey: string | undefined): void | Promise<void>;
}

/** The history being compacted, its sources, and where the retained tail starts. */
export interface CarryOverInput {
  readonly items: readonly Item[];
  readonly sources: readonly HistorySource[];
  readonly split: number;
}

/** The prune boundary stored in a segment's extension state (0 when none). */
export function pruneBoundaryOf(extensions: ReadonlyMap<string, unknown>): number {
  const payload = extensions.get(PRUNE_DOMAIN) as { up_to?: unknown } | undefined;
  return typeof payload?.up_to === "number" ? payload.up_to : 0;
}

/**
 * Prune and compaction for one pod: the request-local prune and the `request_threshold`
 * check before every request, the `threshold` check before a turn, the breaker, and compaction
 * into a new segment. Active when the manifest has `[compaction]`; `pod.compact()` works without it
 * (with the manifest's defaults). It owns the "compact now" request its `preRequest` makes.
 */
export class PodCompaction {
  private failures = 0;
  private off = false;
  /** The internal `preRequest` yielded so that the pod compacts and resumes. */
  private compactNow = false;
  private pruneUpTo = 0;
  /** Tokens the last sent request saved by prune (its measured usage already reflects them). */
  private lastSaved = 0;
  private model: ModelAdapter | undefined;
  private readFile: Tool | undefined;

  constructor(
    private readonly foundation: PodFoundation,
    private readonly options: PodOptions,
    private readonly worker: Worker,
    private readonly usage: UsageLedger,
    private readonly turns: TurnState,
  ) {
    // The compaction request continues the pod's conversation, so its tools are on the pod's list
    // from the first request on (refused outside a compaction): the tool list, where the cached
    // prefix starts, is then the same for both. Without `[compaction]` the list stays as it is.
    if (this.config !== undefined) {
      const { catalog } = foundation.resources;
      foundation.toolServer.registerTool(() =>
        refusedCompactTools((tool) => catalog.render("compact_tool_refused", { tool })),
      );
    }
  }

  /** What a prune puts in place of a media part it leaves out of a request (docs/media.md). */
  private readonly mediaMarker = (ref: MediaRef): string =>
    this.foundation.resources.catalog.render("media_elided", { file: mediaLabel(ref) });

  /** `[compaction]` of the manifest; undefined: no automatic prune or compaction. */
  get config(): CompactionConfig | undefined {
    return this.foundation.loaded.manifest.compaction;
  }

  /** True after three consecutive failures: automatic compaction is off for this pod. */
  get disabled(): boolean {
    return this.off;
  }

  /** True when the request check yielded the turn so that it compacts and resumes. */
  get requested(): boolean {
    return this.compactNow;
  }

  /** A turn starts: only a yield of this turn's own request check means "compact now" (a hook may yield too). */
  startTurn(): void {
    this.compactNow = false;
  }

  /** Takes the prune boundary of the segment the pod continues in (restore, rollback, compaction). */
  syncFromLog(log: SessionLog<Item> | undefined): void {
    this.pruneUpTo = log === undefined ? 0 : pruneBoundaryOf(log.state.extensions);
    this.lastSaved = 0;
  }

  /** Estimated tokens of the next request built from `items` (measured usage, then bytes). */
  tokens(items: readonly Item[] = this.worker.history): number {
    return estimateTokens({ systemPrompt: this.worker.systemPrompt, items, usage: this.usage.records })
      .tokens;
  }

  /** The `threshold` check before a turn (a session must exist). */
  dueBeforeTurn(log: SessionLog<Item> | undefined): boolean {
    const config = this.config;
    return config !== undefined && !this.off && log !== undefined && this.tokens() >= config.threshold;
  }

  /** The internal interceptor's step before every request: prune the copy, then the `request_threshold` check. */
  async preRequest(
    context: PreRequestContext,
    log: SessionLog<Item> | undefined,
  ): Promise<PreRequestDecision> {
    const config = this.config;
    if (config === undefined) return { action: "continue" };
    const plan = planPrune(context.items, this.pruneUpTo, {
      protectedTokens: config.prune_protected_tokens,
      minSavings: config.prune_min_savings,
      mediaMarker: this.mediaMarker,
    });
    const estimate = estimateTokens({
      systemPrompt: context.systemPrompt,
      items: context.items,
      usage: this.usage.records,
    });
    // A measurement already reflects the content the previous request left out.
    const saved =
      estimate.method === "bytes" ? plan.savedTokens : Math.max(0, plan.savedTokens - this.lastSaved);
    if (!this.off && estimate.tokens - saved >= config.request_threshold) {
      // The boundary stays where the last sent request had it: the compaction request continues that one.
      this.compactNow = true;
      return { action: "yield" };
    }
    // Every request since the last step sent the items before the boundary it had unchanged: a
    // breakpoint there lets a step, which changes what follows, still read them.
    const stable = this.pruneUpTo;
    if (plan.upTo !== this.pruneUpTo) {
      this.pruneUpTo = plan.upTo;
      await log?.append({ kind: "extension", domain: PRUNE_DOMAIN, payload: { up_to: plan.upTo } });
    }
    this.lastSaved = plan.savedTokens;
    if (plan.upTo === 0) return { action: "continue" };
    return {
      action: "continue_with",
      items: [...plan.items],
      ...(stable === 0 ? {} : { stablePrefixEnd: stable - 1 }),
    };
  }

  /**
   * An automatic compaction, best-effort: a failure is reported (`pod.compaction_failed`) and the
   * pod goes on in the same segment; the breaker ends retries. An abort is rethrown.
   */
  async compactOrWarn(reason: "threshold" | "request_threshold", request: CompactionRequest): Promise<void> {
    this.compactNow = false;
    try {
      await this.compact(reason, request);
    } catch (error) {
      if (request.signal.aborted) throw error;
      this.foundation.warn({
        code: "pod.compaction_failed",
        message: `compaction failed: ${(error as Error).message}`,
      });
    }
  }

  /**
   * Compacts the pod's history into a new segment. Automatic compactions count towards the breaker;
   * every failure is reported (`compaction_failed`) and rethrown with nothing changed. An abort is
   * rethrown as it is (it is not a failure of compaction).
   */
  async compact(reason: CompactionReason, request: CompactionRequest): Promise<CompactionOutcome> {
    const { log, signal, reporting } = request;
    const config = reason === "manual" ? this.manualConfig() : (this.config as CompactionConfig);
    reporting.emit({ type: "compaction_start", reason });
    const started = performance.now();
    try {
      // A restored pod that has not run yet has not loaded its tools: the request declares them all.
      await this.foundation.toolServer.flushPending();
      const result = await compactHistory({
        items: this.worker.history,
        sources: log.state.historySources,
        conversation: this.conversation(log),
        usage: this.usage.records,
        config,
        catalog: this.foundation.resources.catalog,
        model: this.compactModel(),
        readFile: await this.readFileTool(signal),
        context: () => request.contextBlock(),
        ...(request.carryOver === undefined ? {} : { carryOver: request.carryOver }),
        signal,
        onWorkerEvent: (event) => reporting.workerEvent(event),
      });
      const next = await log.createCompactedSegment({
        history: result.history,
        historySources: result.sources,
        atTurn: this.turns.turns,
      });
      await request.moveTo(next, result.contextKey);
      this.syncFromLog(next);
      if (reason !== "manual") this.failures = 0;
      const outcome = {
        fromSegmentId: log.segmentId,
        toSegmentId: next.segmentId,
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
        durationMs: Math.round(performance.now() - started),
      };
      reporting.emit({ type: "compaction_done", reason, ...outcome });
      return { status: "compacted", ...outcome };
    } catch (error) {
      if (signal.aborted)
        throw AbortedError.isInstance(error) ? error : new AbortedError(undefined, { cause: error });
      if (reason !== "manual") {
        this.failures += 1;
        if (this.failures >= COMPACTION_BREAKER_LIMIT) this.off = true;
      }
      reporting.emit({ type: "compaction_failed", reason, error: error as Error, disabled: this.off });
      throw error;
    }
  }

  /** The pod's conversation as its next request would carry it, before this request's own appends. */
  private conversation(log: SessionLog<Item>): PodConversation {
    return {
      systemPrompt: this.worker.systemPrompt,
      items: prunedItems(this.worker.history, this.pruneUpTo, this.mediaMarker).items,
      media: this.worker.media,
      tools: this.foundation.toolServer.definitions(),
      requestConfig: this.worker.config,
      promptCacheKey: log.state.sessionId,
      previousRequestLength: this.usage.records.at(-1)?.historyLen,
    };
  }

  /** `[compaction]`, or the manifest's defaults for an explicit `pod.compact()` on a pod without it. */
  private manualConfig(): CompactionConfig {
    return this.config ?? defaultCompactionConfig(this.foundation.loaded.manifest.model.context_window);
  }

  private compactModel(): ModelAdapter {
    const { manifest } = this.foundation.loaded;
    this.model ??= podModelAdapter(manifest.model, this.options.model, this.options.env ?? process.env);
    return this.model;
  }

  /** The builtin `read_file` on the pod's scope, built through the builtin package like any tool. */
  private async readFileTool(signal: AbortSignal): Promise<Tool> {
    if (this.readFile !== undefined) return this.readFile;
    const { loaded } = this.foundation;
    const env = this.options.env ?? process.env;
    const factories = await builtinToolPackage.tools({
      scope: loaded.scope,
      workspace: loaded.workspace,
      env,
      options: { builtin: ["read_file"] },
      // read_file starts no process: this sandbox is never probed.
      sandbox: createSandbox({
        config: loaded.manifest.sandbox,
        scope: loaded.scope,
        workspace: loaded.workspace,
        env,
        warn: () => {},
      }),
      warn: () => {},
      signal,
      onClose: () => {},
    });
    const made = await (factories[0] as () => Tool | readonly Tool[] | Promise<Tool | readonly Tool[]>)();
    this.readFile = Array.isArray(made) ? (made[0] as Tool) : (made as Tool);
    return this.readFile;
  }
}
