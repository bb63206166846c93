import {
  AbortedError,
  type Item,
  type ModelAdapter,
  type PreRequestContext,
  type PreRequestDecision,
  type Tool,
  type UsageRecord,
  type Worker,
  type WorkerEvent,
} from "@podkit/llm-worker";
import { COMPACTION_DEFAULTS, type CompactionConfig } from "@podkit/manifest";
import type { SessionLog } from "@podkit/session-store";
import { builtinToolPackage } from "@podkit/tools";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import { compactHistory } from "../compaction/compactor.js";
import { planPrune } from "../compaction/prune.js";
import type { ContextSectionState } from "../context/context-section.js";
import type { ContextSections } from "../context/context-sections.js";
import { estimateTokens } from "../usage/token-estimator.js";
import type { CompactionOutcome, CompactionReason, PodEvent } from "./events.js";
import { podModelAdapter } from "./model.js";
import type { PodOptions } from "./pod-options.js";
import type { PodParts } from "./pod-setup.js";

/** Consecutive failed automatic compactions after which compaction is off for the pod's life. */
export const COMPACTION_BREAKER_LIMIT = 3;

/** The `extension` domain recording the prune boundary, so a restored pod sends the same requests. */
export const PRUNE_DOMAIN = "pod.prune";

/** What the compaction glue needs of its pod. */
export interface CompactionHost {
  /** The segment written now (a compaction moves it). */
  log(): SessionLog<Item> | undefined;
  readonly worker: Worker;
  readonly catalog: PromptCatalog;
  readonly usage: readonly UsageRecord[];
  readonly turns: number;
  readonly contexts: ContextSections;
  contextState(signal: AbortSignal): ContextSectionState;
  /** Continues in the compacted segment: its history, no usage, no extension state. */
  moveTo(log: SessionLog<Item>, contextKey: string | undefined): void;
  /** Reports a failed automatic compaction (the pod goes on). */
  warn(message: string): void;
  /** Receives the compaction worker's events (the pod's telemetry). */
  workerEvent(event: WorkerEvent): void;
}

/** The prune boundary stored in a segment's extension state (0 when none). */
export function pruneBoundaryOf(extensions: ReadonlyMap<string, unknown>): number {
  const payload = extensions.get(PRUNE_DOMAIN) as { up_to?: unknown } | undefined;
  return typeof payload?.up_to === "number" ? payload.up_to : 0;
}

/**
 * Prune and compaction for one pod (SPEC §4.5): the request-local prune and the `request_threshold`
 * check before every request, the `threshold` check before a turn, the breaker, and compaction
 * into a new segment. Active when the manifest has `[compaction]`; `pod.compact()` works without it
 * (with the §4.5 defaults).
 */
export class PodCompaction {
  private failures = 0;
  private off = false;
  /** The internal `preRequest` yielded so that the pod compacts and resumes. */
  requested = false;
  private pruneUpTo = 0;
  /** Tokens the last sent request saved by prune (its measured usage already reflects them). */
  private lastSaved = 0;
  private model: ModelAdapter | undefined;
  private readFile: Tool | undefined;

  constructor(
    private readonly parts: PodParts,
    private readonly options: PodOptions,
  ) {}

  /** `[compaction]` of the manifest; undefined: no automatic prune or compaction. */
  get config(): CompactionConfig | undefined {
    return this.parts.loaded.manifest.compaction;
  }

  /** True after three consecutive failures: automatic compaction is off for this pod. */
  get disabled(): boolean {
    return this.off;
  }

  /** Takes the prune boundary of the segment the pod continues in (restore, rollback, compaction). */
  syncFromLog(log: SessionLog<Item> | undefined): void {
    this.pruneUpTo = log === undefined ? 0 : pruneBoundaryOf(log.state.extensions);
    this.lastSaved = 0;
  }

  /** Estimated tokens of the next request built from `items` (measured usage, then bytes). */
  tokens(host: CompactionHost, items: readonly Item[] = host.worker.history): number {
    return estimateTokens({ systemPrompt: host.worker.systemPrompt, items, usage: host.usage }).tokens;
  }

  /** The `threshold` check before a turn. */
  dueBeforeTurn(host: CompactionHost): boolean {
    const config = this.config;
    return (
      config !== undefined && !this.off && host.log() !== undefined && this.tokens(host) >= config.threshold
    );
  }

  /** The internal interceptor's step before every request: prune the copy, then the `request_threshold` check. */
  async preRequest(context: PreRequestContext, host: CompactionHost): Promise<PreRequestDecision> {
    const config = this.config;
    if (config === undefined) return { action: "continue" };
    const plan = planPrune(context.items, this.pruneUpTo, {
      protectedTokens: config.prune_protected_tokens,
      minSavings: config.prune_min_savings,
    });
    if (plan.upTo !== this.pruneUpTo) {
      this.pruneUpTo = plan.upTo;
      await host.log()?.append({ kind: "extension", domain: PRUNE_DOMAIN, payload: { up_to: plan.upTo } });
    }
    const estimate = estimateTokens({
      systemPrompt: context.systemPrompt,
      items: context.items,
      usage: host.usage,
    });
    // A measurement already reflects the content the previous request left out.
    const saved =
      estimate.method === "bytes" ? plan.savedTokens : Math.max(0, plan.savedTokens - this.lastSaved);
    if (!this.off && estimate.tokens - saved >= config.request_threshold) {
      this.requested = true;
      return { action: "yield" };
    }
    this.lastSaved = plan.savedTokens;
    return plan.upTo === 0 ? { action: "continue" } : { action: "continue_with", items: [...plan.items] };
  }

  /** Prelude step 4 (SPEC §4.1): the `threshold` check before a turn; best-effort, a failure is reported and the turn runs. */
  async compactBeforeTurn(
    host: CompactionHost,
    signal: AbortSignal,
    emit: (event: PodEvent) => void,
  ): Promise<void> {
    if (!this.dueBeforeTurn(host)) return;
    await this.compactOrWarn("threshold", host, signal, emit);
  }

  /**
   * The request path: the turn yielded before a request, so it is closed with `run_completed{yielded}`
   * in the old segment (never touched again), the history is compacted into a new segment, and the
   * turn goes on there (`invoke{resume}`). A failed compaction is reported and the turn goes on in
   * the same segment; the size check still runs before the next request, and the breaker ends retries.
   */
  async compactMidTurn(
    host: CompactionHost,
    signal: AbortSignal,
    emit: (event: PodEvent) => void,
  ): Promise<void> {
    this.requested = false;
    await host.log()?.append({ kind: "run_completed", result: "yielded", interrupted: false });
    await this.compactOrWarn("request_threshold", host, signal, emit);
    await host.log()?.append({ kind: "invoke", trigger: "resume" }, { signal });
  }

  private async compactOrWarn(
    reason: "threshold" | "request_threshold",
    host: CompactionHost,
    signal: AbortSignal,
    emit: (event: PodEvent) => void,
  ): Promise<void> {
    try {
      await this.compact(reason, host, signal, emit);
    } catch (error) {
      if (signal.aborted) throw error;
      host.warn(`compaction failed: ${(error as Error).message}`);
    }
  }

  /**
   * Compacts the pod's history into a new segment. Automatic compactions count towards the breaker;
   * every failure is reported (`compaction_failed`) and rethrown with nothing changed. An abort is
   * rethrown as it is (it is not a failure of compaction).
   */
  async compact(
    reason: CompactionReason,
    host: CompactionHost,
    signal: AbortSignal,
    emit: (event: PodEvent) => void,
  ): Promise<CompactionOutcome> {
    const log = host.log();
    if (log === undefined) return { status: "skipped", reason: "no_session" };
    const config = reason === "manual" ? this.manualConfig() : (this.config as CompactionConfig);
    emit({ type: "compaction_start", reason });
    const started = performance.now();
    try {
      const result = await compactHistory({
        items: host.worker.history,
        sources: log.state.historySources,
        systemPrompt: host.worker.systemPrompt,
        usage: host.usage,
        config,
        catalog: host.catalog,
        model: this.compactModel(),
        requestConfig: host.worker.config,
        readFile: await this.readFileTool(signal),
        context: () => host.contexts.current(host.contextState(signal), host.catalog),
        signal,
        onWorkerEvent: (event) => host.workerEvent(event),
      });
      const next = await log.createCompactedSegment({
        history: result.history,
        historySources: result.sources,
        atTurn: host.turns,
      });
      host.moveTo(next, result.contextKey);
      this.syncFromLog(next);
      if (reason !== "manual") this.failures = 0;
      const outcome = {
        fromSegmentId: log.segmentId,
        toSegmentId: next.segmentId,
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
        durationMs: Math.round(performance.now() - started),
      };
      emit({ type: "compaction_done", reason, ...outcome });
      return { status: "compacted", ...outcome };
    } catch (error) {
      if (signal.aborted)
        throw AbortedError.isInstance(error) ? error : new AbortedError(undefined, { cause: error });
      if (reason !== "manual") {
        this.failures += 1;
        if (this.failures >= COMPACTION_BREAKER_LIMIT) this.off = true;
      }
      emit({ type: "compaction_failed", reason, error: error as Error, disabled: this.off });
      throw error;
    }
  }

  /** `[compaction]`, or its §4.5 defaults for an explicit `pod.compact()` on a pod without it. */
  private manualConfig(): CompactionConfig {
    const window = this.parts.loaded.manifest.model.context_window;
    return (
      this.config ?? {
        ...COMPACTION_DEFAULTS,
        threshold: Math.floor(window * 0.6),
        request_threshold: Math.floor(window * 0.75),
      }
    );
  }

  private compactModel(): ModelAdapter {
    const { manifest } = this.parts.loaded;
    this.model ??= podModelAdapter(manifest.model, this.options.model, this.options.env ?? process.env);
    return this.model;
  }

  /** The builtin `read_file` on the pod's scope, built through the builtin package like any tool. */
  private async readFileTool(signal: AbortSignal): Promise<Tool> {
    if (this.readFile !== undefined) return this.readFile;
    const { loaded } = this.parts;
    const factories = await builtinToolPackage.tools({
      scope: loaded.scope,
      workspace: loaded.workspace,
      env: this.options.env ?? process.env,
      options: { builtin: ["read_file"] },
      warn: () => {},
      signal,
      onClose: () => {},
    });
    const made = await (factories[0] as () => Tool | readonly Tool[] | Promise<Tool | readonly Tool[]>)();
    this.readFile = Array.isArray(made) ? (made[0] as Tool) : (made as Tool);
    return this.readFile;
  }
}
