import type { Item, UsageRecord, Worker, WorkerEvent } from "@podkit/llm-worker";
import { SessionLog, type SessionLogOptions } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextSectionState } from "../context/context-section.js";
import { EMPTY_CONTEXT_KEY } from "../context/context-sections.js";
import type { SystemPromptTemplate } from "../system-prompt/system-prompt-template.js";
import { composeInterceptor, type PodHooks } from "./hooks.js";
import type { CompactionHost } from "./pod-compaction.js";
import { PodCompaction } from "./pod-compaction.js";
import { PodContext } from "./pod-context.js";
import type { PodOptions } from "./pod-options.js";
import { workerStateOf } from "./pod-restore.js";
import { createWorker, type PodParts, renderSystemPrompt } from "./pod-setup.js";
import { SessionRecorder } from "./session-recorder.js";
import type { TurnHost, TurnState } from "./turn.js";

/** What the session side reports back to its pod. */
export interface PodSessionEvents {
  /** The log options every segment the pod opens or creates is given (drift forks). */
  readonly logOptions: SessionLogOptions<Item>;
  warn(code: "pod.context_section" | "pod.compaction_failed", message: string): void;
  /** An event of the compaction worker (telemetry). */
  compactionWorkerEvent(event: WorkerEvent): void;
}

/**
 * A pod's session side: the head segment it writes (moved by compaction and drift forks), the
 * worker and the session state folded from the log (turns, usage, extensions, context key, prune
 * boundary), the one-time system prompt and session creation, and the hosts the turn and the
 * compaction glue work through.
 */
export class PodSession {
  private template: SystemPromptTemplate | null;
  log: SessionLog<Item> | undefined;
  readonly recorder: SessionRecorder;
  readonly worker: Worker;
  readonly state: TurnState;
  readonly usageRecords: UsageRecord[];
  /** Extension state by domain (restored from the log; features fold their own). */
  readonly extensions: Map<string, unknown>;
  readonly context: PodContext;
  readonly compaction: PodCompaction;
  /** The signal of the run in progress (context sections load under it). */
  runSignal: AbortSignal | undefined;

  constructor(
    readonly parts: PodParts,
    private readonly options: PodOptions,
    init: { template: SystemPromptTemplate | null; log?: SessionLog<Item> },
    private readonly events: PodSessionEvents,
  ) {
    this.template = init.template;
    this.log = init.log;
    this.recorder = new SessionRecorder(() => this.log);
    const state = init.log?.state;
    this.worker = createWorker(parts, options, this.recorder, workerStateOf(init.log));
    this.state = { turns: state?.turn ?? 0, resumable: false };
    this.usageRecords = [...(state?.usage ?? [])];
    this.extensions = new Map(state?.extensions ?? []);
    this.context = new PodContext(options.contextSections ?? [], this.recorder, (message) =>
      events.warn("pod.context_section", message),
    );
    this.compaction = new PodCompaction(parts, options);
    this.syncFromLog();
    if (state !== undefined) this.worker.setPromptCacheKey(state.sessionId);
  }

  get catalog(): PromptCatalog {
    return this.parts.resources.catalog;
  }

  /**
   * Composes the worker's interceptor once, at the first run: queued notifications and the context
   * block before each request, the compaction checks, then the registered hooks.
   */
  installInterceptor(hooks: readonly PodHooks[], takeNotifications: () => Item[]): void {
    this.worker.setInterceptor(
      composeInterceptor(
        {
          pendingHistoryAppends: async () => [
            ...takeNotifications(),
            ...(await this.context.take(this.contextState(this.runSignal), this.catalog)),
          ],
          preRequest: (context) => this.compaction.preRequest(context, this.compactionHost()),
        },
        [...hooks],
      ),
    );
    this.context.sections.freeze();
  }

  /** Materialization: flush tools, read AGENTS.md, one clock reading, render, trailing sections — once. */
  async ensureSystemPromptMaterialized(): Promise<string> {
    const template = this.template;
    if (template === null) return this.worker.systemPrompt ?? "";
    const rendered = await renderSystemPrompt(this.parts, template, this.options.clock);
    this.worker.setSystemPrompt(rendered);
    this.template = null;
    return rendered;
  }

  /** Creates the session (its `segment_start` holds the rendered prompt) on the first run. */
  async ensureSessionHead(systemPrompt: string): Promise<SessionLog<Item>> {
    this.log ??= await SessionLog.create(
      this.parts.store,
      { systemPrompt, config: { ...this.worker.config } },
      this.events.logOptions,
    );
    this.worker.setPromptCacheKey(this.log.state.sessionId);
    return this.log;
  }

  contextState(signal: AbortSignal | undefined): ContextSectionState {
    return {
      workspace: this.parts.loaded.workspace,
      sessionId: this.log?.state.sessionId,
      segmentId: this.log?.state.segmentId,
      turn: this.state.turns,
      extensions: this.extensions,
      signal: signal ?? new AbortController().signal,
    };
  }

  /** The committed context key and prune boundary of the segment the pod continues in. */
  syncFromLog(): void {
    this.context.syncFromLog(this.log);
    this.compaction.syncFromLog(this.log);
  }

  turnHost(): TurnHost {
    return {
      worker: this.worker,
      recorder: this.recorder,
      catalog: this.catalog,
      compaction: this.compaction,
      state: this.state,
      usageRecords: this.usageRecords,
      warn: this.parts.warn,
      log: () => this.log as SessionLog<Item>,
      compactionHost: () => this.compactionHost(),
      syncFromLog: () => this.syncFromLog(),
    };
  }

  compactionHost(): CompactionHost {
    return {
      log: () => this.log,
      worker: this.worker,
      catalog: this.catalog,
      usage: this.usageRecords,
      turns: this.state.turns,
      contexts: this.context.sections,
      contextState: (signal) => this.contextState(signal),
      moveTo: (log, contextKey) => {
        this.log = log;
        this.worker.setHistory([...log.state.history]);
        this.usageRecords.length = 0;
        this.extensions.clear();
        this.context.sections.markCommitted(contextKey ?? EMPTY_CONTEXT_KEY);
      },
      warn: (message) => this.events.warn("pod.compaction_failed", message),
      workerEvent: (event) => this.events.compactionWorkerEvent(event),
    };
  }
}
