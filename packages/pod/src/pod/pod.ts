import type {
  Item,
  ModelAdapter,
  Tool,
  ToolFactory,
  UsageRecord,
  Worker,
  WorkerEvent,
} from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { type DriftFork, SessionLog, type SessionLogOptions, type Store } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextSection, ContextSectionState } from "../context/context-section.js";
import { EMPTY_CONTEXT_KEY } from "../context/context-sections.js";
import { PodUsageError } from "../errors.js";
import { SystemPromptTemplate } from "../system-prompt/system-prompt-template.js";
import { PodTelemetry, podIdentityOf, type RunSource } from "../telemetry/pod-telemetry.js";
import {
  type AfterTurnJob,
  type AfterTurnJobContext,
  AfterTurnScheduler,
  TurnGate,
} from "./after-turn-jobs.js";
import { HooksFrozenError, PodBusyError, PodClosedError, PromptCancelledError } from "./errors.js";
import {
  type CompactionOutcome,
  type PodEvent,
  type PodRunResult,
  type PodTrigger,
  podEventOf,
} from "./events.js";
import { composeInterceptor, type PodHooks } from "./hooks.js";
import { podModelAdapter } from "./model.js";
import { NotificationQueue } from "./notification-queue.js";
import { type CompactionHost, PodCompaction } from "./pod-compaction.js";
import { PodContext } from "./pod-context.js";
import { NOTIFICATION_CAPACITY, type PodOptions } from "./pod-options.js";
import { createWorker, loadParts, loadResources, type PodParts, renderSystemPrompt } from "./pod-setup.js";
import { RunHandle } from "./run-handle.js";
import { SessionRecorder } from "./session-recorder.js";
import { runTurn, type TurnHost, type TurnState } from "./turn.js";

type Emit = (event: PodEvent) => void;

/**
 * A pod (SPEC §4): a manifest's worker, tools, layered prompt catalog and session log wired
 * into one agent. Construction writes nothing and needs no API key; the system prompt is
 * rendered once at the first run and the session is created right after it.
 */
export class Pod {
  private template: SystemPromptTemplate | null;
  private log: SessionLog<Item> | undefined;
  private readonly recorder: SessionRecorder;
  private readonly worker: Worker;
  private readonly hooks: PodHooks[] = [];
  private interceptorInstalled = false;
  private busy: Promise<unknown> | undefined;
  private controller: AbortController | undefined;
  private emit: Emit | undefined;
  private readonly queue = new NotificationQueue();
  private closed = false;
  private readonly state: TurnState;
  private readonly usageRecords: UsageRecord[];
  /** Extension state by domain (restored from the log; features fold their own). */
  readonly extensions: Map<string, unknown>;
  private readonly telemetry: PodTelemetry;
  /** What a run's trace reads from the pod while the run goes on. */
  private readonly traceSource: RunSource = {
    session: () =>
      this.log === undefined
        ? undefined
        : { sessionId: this.log.state.sessionId, segmentId: this.log.state.segmentId },
    history: () => this.worker.history,
    systemPrompt: () => this.worker.systemPrompt,
  };
  private readonly afterTurn: AfterTurnScheduler;
  private readonly listeners = new Set<(event: PodEvent) => void>();
  /** The last run finished a turn, so the after-turn jobs are due when it ends. */
  private turnFinished = false;
  private readonly turnGate = new TurnGate();
  private readonly context: PodContext;
  private readonly compaction: PodCompaction;
  /** The signal of the run in progress (context sections load under it). */
  private runSignal: AbortSignal | undefined;

  private constructor(
    private readonly parts: PodParts,
    private readonly options: PodOptions,
    init: { template: SystemPromptTemplate | null; log?: SessionLog<Item> },
  ) {
    this.template = init.template;
    this.log = init.log;
    this.recorder = new SessionRecorder(() => this.log);
    const state = init.log?.state;
    this.worker = createWorker(
      parts,
      options,
      this.recorder,
      state === undefined
        ? {}
        : {
            ...(state.systemPrompt === null ? {} : { systemPrompt: state.systemPrompt }),
            history: [...state.history],
            config: state.config,
            interrupted: state.interrupted,
            previousRequestLength: state.usage.at(-1)?.historyLen,
          },
    );
    parts.toolWarnings.relay = (message) => this.emit?.({ type: "warning", message });
    this.state = { turns: state?.turn ?? 0, resumable: false };
    this.usageRecords = [...(state?.usage ?? [])];
    this.extensions = new Map(state?.extensions ?? []);
    this.telemetry = new PodTelemetry(
      podIdentityOf(parts.loaded, options.model),
      this.traceSource,
      options.telemetry,
    );
    this.afterTurn = new AfterTurnScheduler((job, error) => {
      const message = `after-turn job "${job.name}" failed: ${error instanceof Error ? error.message : String(error)}`;
      this.parts.warn({ code: "pod.after_turn_job", message });
      this.publish({ type: "warning", message });
    });
    this.context = new PodContext(options.contextSections ?? [], this.recorder, (message) =>
      this.warn("pod.context_section", message),
    );
    this.compaction = new PodCompaction(parts, options);
    this.syncFromLog();
    if (state !== undefined) this.worker.setPromptCacheKey(state.sessionId);
  }

  /**
   * Builds a pod from a loaded manifest: the layered catalog (through `loadPodResources`), the
   * parsed system prompt template (`InvalidSystemPromptTemplateError` on a syntax error) and the
   * tool packages. Nothing is written and no API key is read.
   */
  static async fromManifest(loaded: LoadedManifest, options: PodOptions = {}): Promise<Pod> {
    const resources = await loadResources(loaded, options);
    const template = SystemPromptTemplate.parse(loaded.manifest.worker.system_prompt, resources.loader);
    const parts = await loadParts(loaded, resources, options);
    return new Pod(parts, options, { template });
  }

  /**
   * Restores session `sessionId` from its head segment: the stored system prompt verbatim (the
   * template is never parsed), history, config, turn count, interrupted flag, usage and extension
   * state. Later entries are appended to that segment.
   */
  static async restore(loaded: LoadedManifest, sessionId: string, options: PodOptions = {}): Promise<Pod> {
    const resources = await loadResources(loaded, options);
    const parts = await loadParts(loaded, resources, options);
    let pod: Pod | undefined;
    const log = await SessionLog.open(
      parts.store,
      sessionId,
      Pod.logOptions(() => pod),
    );
    pod = new Pod(parts, options, { template: null, log });
    const { last } = await parts.store.describeSegment({
      sessionId: log.state.sessionId,
      segmentId: log.state.segmentId,
    });
    pod.state.resumable =
      last.kind === "run_completed" && (last.result === "paused" || last.result === "yielded");
    if (log.otherBranches.length > 0) {
      const ids = log.otherBranches.map((branch) => branch.segmentId).join(", ");
      pod.parts.warn({
        code: "pod.other_branches",
        message: `session ${sessionId} has other live branches (${ids}); restored its head ${log.state.segmentId}`,
      });
    }
    return pod;
  }

  private static logOptions(pod: () => Pod | undefined): SessionLogOptions<Item> {
    return { onDriftFork: (fork) => pod()?.driftForked(fork) };
  }

  /** The session id, once the session exists (after the first run, or restored). */
  get sessionId(): string | undefined {
    return this.log?.state.sessionId;
  }

  /** The segment the pod writes to (it changes with compaction and drift forks). */
  get segmentId(): string | undefined {
    return this.log?.state.segmentId;
  }

  /** The layered prompt catalog every code path of this pod uses. */
  get catalog(): PromptCatalog {
    return this.parts.resources.catalog;
  }

  /** The rendered system prompt; undefined until the first run (or `renderSystemPrompt()`). */
  get systemPrompt(): string | undefined {
    return this.worker.systemPrompt;
  }

  get history(): readonly Item[] {
    return this.worker.history;
  }

  /** The request config (from `[worker]`, or the restored session's). */
  get config(): Readonly<Record<string, unknown>> {
    return this.worker.config;
  }

  /** Completed turns of the session. */
  get turn(): number {
    return this.state.turns;
  }

  /** True after a run that was aborted, cancelled, paused or failed. */
  get interrupted(): boolean {
    return this.worker.lastRunInterrupted;
  }

  /** Every usage record of the session's head segment, one per model request. */
  get usage(): readonly UsageRecord[] {
    return this.usageRecords;
  }

  /** Registers hooks; after the first run they are frozen (`HooksFrozenError`). */
  addHooks(hooks: PodHooks): void {
    if (this.interceptorInstalled) {
      throw new HooksFrozenError("hooks cannot be registered after the pod's first run", {
        hint: "register every hook right after Pod.fromManifest / Pod.restore",
      });
    }
    this.hooks.push(hooks);
  }

  /**
   * Registers background work run after each finished turn (one pass at a time, coalescing;
   * failures become warnings). Like hooks, only before the first run.
   */
  addAfterTurnJob(job: AfterTurnJob): void {
    if (this.interceptorInstalled) {
      throw new HooksFrozenError("after-turn jobs cannot be registered after the pod's first run", {
        hint: "register them right after Pod.fromManifest / Pod.restore",
      });
    }
    this.afterTurn.add(job);
  }

  /** Adds a tool (or factory) for the main worker; only before the tool list is final (first run). */
  registerTool(tool: Tool | ToolFactory): void {
    this.parts.toolServer.registerTool(tool);
  }

  /** Receives every event the pod reports, those of runs and those of background jobs; returns an unsubscribe. */
  subscribe(listener: (event: PodEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when no after-turn job is running. */
  async whenJobsIdle(): Promise<void> {
    await this.afterTurn.idle();
  }

  /** The loaded manifest the pod was built from. */
  get manifest(): LoadedManifest {
    return this.parts.loaded;
  }

  /** The model adapter of the manifest's model (with the pod's overrides), for a feature's own workers. */
  get modelAdapter(): ModelAdapter {
    return podModelAdapter(
      this.parts.loaded.manifest.model,
      this.options.model,
      this.options.env ?? process.env,
    );
  }

  /**
   * Appends an `extension` entry to the session through the pod's own writer, after any turn in
   * progress (it never lands inside a turn, so a rolled-back turn cannot take it along), and
   * updates `extensions`. Needs the session to exist (after the first run, or restored).
   */
  async appendExtension(domain: string, payload: unknown): Promise<void> {
    await this.turnGate.passed();
    const log = this.log;
    if (log === undefined) {
      throw new PodUsageError(
        "appendExtension needs the session: it exists after the first run (or on a restored pod)",
      );
    }
    // Synchronous from the idle check to the queued write: no run can start in between.
    const written = log.append({ kind: "extension", domain, payload });
    this.extensions.set(domain, payload);
    await written;
  }

  /**
   * Registers a context section (SPEC §4.4) after the builtin `notes` and `PodOptions.contextSections`;
   * like hooks, only before the first run.
   */
  addContextSection<T>(section: ContextSection<T>): void {
    this.context.sections.add(section as ContextSection);
  }

  /** True once three automatic compactions in a row failed: the pod goes on without compacting. */
  get compactionDisabled(): boolean {
    return this.compaction.disabled;
  }

  /**
   * Compacts the session now (SPEC §4.5; `podkit compact`) into a new segment, with `[compaction]`
   * or its defaults. Resolves `skipped` before the first run; rejects with the typed compaction
   * error (nothing changed) on failure, and with `PodBusyError` while a run is in progress.
   */
  async compact(
    options: { signal?: AbortSignal; onEvent?: (event: PodEvent) => void } = {},
  ): Promise<CompactionOutcome> {
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    // A background job (memory extract) reads the segment being compacted: let it finish first.
    await this.afterTurn.idle();
    if (this.busy !== undefined) {
      throw new PodBusyError("the pod is running a turn: compact when it is idle", {
        hint: "await the running handle (or pod.whenIdle()) first",
      });
    }
    const signals = [options.signal, this.options.signal].filter((s) => s !== undefined);
    const signal = signals.length === 0 ? new AbortController().signal : AbortSignal.any(signals);
    const work = this.compaction.compact("manual", this.host(), signal, (event) => {
      this.telemetry.onJobEvent(event);
      options.onEvent?.(event);
    });
    this.busy = work;
    try {
      return await work;
    } finally {
      this.busy = undefined;
    }
  }

  /** Starts a turn for `input`. The handle is an async iterable of events and a promise of the result. */
  run(input: string, options: { signal?: AbortSignal } = {}): RunHandle {
    return this.start("user", input, options.signal);
  }

  /** Continues a paused or yielded turn without new input. */
  resume(options: { signal?: AbortSignal } = {}): RunHandle {
    return this.start("resume", undefined, options.signal);
  }

  /** Aborts the run in progress (like its signal); the next `run()` records the interrupt. */
  interrupt(reason = "interrupted by the user"): void {
    this.controller?.abort(new Error(reason));
  }

  /** Resolves when no run is in progress (including runs `autoRun` started). */
  async whenIdle(): Promise<void> {
    while (this.busy !== undefined) await this.busy.catch(() => {});
  }

  /**
   * Queues a notification for the model: committed as `system_item{kind:"notification"}` at the
   * next loop step, before the model sees it. Beyond 128 queued the oldest are dropped (one
   * warning per overflow). An idle pod with `autoRun` starts a turn for it.
   */
  notify(message: string): void {
    if (this.queue.push(message)) {
      this.warn(
        "pod.notifications_dropped",
        `notification queue full (${NOTIFICATION_CAPACITY} waiting): the oldest are being dropped until the model has seen the queue`,
      );
    }
    if (this.options.autoRun === true && this.busy === undefined && !this.closed) {
      this.start("notify", undefined, undefined).result.catch(() => {});
    }
  }

  /**
   * Renders the system prompt now, as the first run would (tools flushed, AGENTS.md read, one
   * clock reading), without creating the session — what `podkit prompt render` shows.
   */
  renderSystemPrompt(): Promise<string> {
    return this.ensureSystemPromptMaterialized();
  }

  /** Aborts a run in progress and closes the tools (MCP servers, package clean-up). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.interrupt("the pod was closed");
    await this.whenIdle();
    await this.afterTurn.close();
    await this.parts.toolSet.close();
    if (this.options.store === undefined) await this.parts.store.close();
  }

  private start(trigger: PodTrigger, input: string | undefined, signal: AbortSignal | undefined): RunHandle {
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    if (this.busy !== undefined) {
      throw new PodBusyError("the pod is already running a turn: one run at a time", {
        hint: "await the running handle (or pod.whenIdle()) first, or pod.interrupt() it",
      });
    }
    const controller = new AbortController();
    const signals = [controller.signal, signal, this.options.signal].filter((s) => s !== undefined);
    const runSignal = AbortSignal.any(signals);
    this.controller = controller;
    const tracing = this.telemetry.startRun({ trigger, input });
    const handle = new RunHandle(async (emitToHandle) => {
      const emit: Emit = (event) => {
        tracing.onPodEvent(event);
        emitToHandle(event);
        this.publish(event);
      };
      this.emit = emit;
      const unsubscribe = this.worker.subscribe((event) => {
        tracing.onWorkerEvent(event);
        this.forward(event, emit);
      });
      try {
        const result = await tracing.within(() => this.execute(trigger, input, runSignal, emit));
        emit({ type: "run_end", result });
        return result;
      } catch (error) {
        emit({ type: "run_end", result: undefined, error: error as Error });
        throw error;
      } finally {
        unsubscribe();
        this.emit = undefined;
        this.controller = undefined;
      }
    });
    this.turnFinished = false;
    this.busy = handle.result.finally(() => {
      this.busy = undefined;
      if (this.turnFinished) this.afterTurn.schedule(() => this.afterTurnContext());
      if (this.options.autoRun === true && this.queue.size > 0 && !this.closed) {
        this.start("notify", undefined, undefined).result.catch(() => {});
      }
    });
    this.busy.catch(() => {});
    return handle;
  }

  /** The run prelude (§4.1 order), then one turn, persisted and closed whatever happens. */
  private async execute(
    trigger: PodTrigger,
    input: string | undefined,
    signal: AbortSignal,
    emit: Emit,
  ): Promise<PodRunResult> {
    this.installInterceptor();
    const systemPrompt = await this.ensureSystemPromptMaterialized();
    await this.recorder.closeCrashedTurn(await this.ensureSessionHead(systemPrompt));
    // A background job (memory extract) reads the segment a compaction replaces: let it finish first.
    if (this.compaction.dueBeforeTurn(this.host())) await this.afterTurn.idle();
    await this.compaction.compactBeforeTurn(this.host(), signal, emit);
    if (input !== undefined) {
      for (const hook of this.hooks) {
        const decision = await hook.onPromptSubmit?.(Object.freeze({ text: input }));
        if (decision?.action === "cancel") throw new PromptCancelledError(decision.reason);
      }
    }
    this.runSignal = signal;
    // Open from the turn's invoke to its terminal entry: background extension appends wait for it.
    const closeTurnGate = this.turnGate.open();
    try {
      const result = await runTurn(this.turnHost(), { trigger, input, signal, emit });
      if (result.status === "finished") this.turnFinished = true;
      return result;
    } finally {
      this.runSignal = undefined;
      closeTurnGate();
    }
  }

  private installInterceptor(): void {
    if (this.interceptorInstalled) return;
    this.worker.setInterceptor(
      composeInterceptor(
        {
          pendingHistoryAppends: async () => [
            ...this.takeNotifications(),
            ...(await this.context.take(this.contextState(this.runSignal), this.catalog)),
          ],
          preRequest: (context) => this.compaction.preRequest(context, this.host()),
        },
        [...this.hooks],
      ),
    );
    this.interceptorInstalled = true;
    this.context.sections.freeze();
  }

  /** §4.1: flush tools, read AGENTS.md, one clock reading, render, trailing sections — once. */
  private async ensureSystemPromptMaterialized(): Promise<string> {
    const template = this.template;
    if (template === null) return this.worker.systemPrompt ?? "";
    const rendered = await renderSystemPrompt(this.parts, template, this.options.clock);
    this.worker.setSystemPrompt(rendered);
    this.template = null;
    return rendered;
  }

  /** Creates the session (its `segment_start` holds the rendered prompt) on the first run. */
  private async ensureSessionHead(systemPrompt: string): Promise<SessionLog<Item>> {
    this.log ??= await SessionLog.create(
      this.parts.store,
      { systemPrompt, config: { ...this.worker.config } },
      Pod.logOptions(() => this),
    );
    this.worker.setPromptCacheKey(this.log.state.sessionId);
    return this.log;
  }

  private contextState(signal: AbortSignal | undefined): ContextSectionState {
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
  private syncFromLog(): void {
    this.context.syncFromLog(this.log);
    this.compaction.syncFromLog(this.log);
  }

  private turnHost(): TurnHost {
    return {
      worker: this.worker,
      recorder: this.recorder,
      catalog: this.catalog,
      compaction: this.compaction,
      state: this.state,
      usageRecords: this.usageRecords,
      warn: this.parts.warn,
      log: () => this.log as SessionLog<Item>,
      compactionHost: () => this.host(),
      syncFromLog: () => this.syncFromLog(),
    };
  }

  private host(): CompactionHost {
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
      warn: (message) => this.warn("pod.compaction_failed", message),
    };
  }

  private publish(event: PodEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** The context of an after-turn pass: the head segment as it is when the pass starts. */
  private afterTurnContext(): AfterTurnJobContext | undefined {
    const log = this.log;
    if (log === undefined || this.closed) return undefined;
    const ref = { sessionId: log.state.sessionId, segmentId: log.state.segmentId };
    const store = this.parts.store as Store<Item>;
    return {
      ...ref,
      signal: this.afterTurn.signal,
      extension: (domain) => this.extensions.get(domain),
      readEntries: () => store.readAll(ref),
      appendExtension: (domain, payload) => this.appendExtension(domain, payload),
      emit: (event) => {
        this.telemetry.onJobEvent(event);
        this.publish(event);
      },
    };
  }

  private takeNotifications(): Item[] {
    return this.queue.drain().map((message) => {
      this.emit?.({ type: "notification", message });
      return this.recorder.systemMessage("notification", this.catalog.render("notify_wrapper", { message }));
    });
  }

  private forward(event: WorkerEvent, emit: Emit): void {
    if (event.type === "usage") this.usageRecords.push(event.usage);
    const podEvent = podEventOf(event);
    if (podEvent !== undefined) emit(podEvent);
  }

  private warn(
    code: "pod.notifications_dropped" | "pod.drift_fork" | "pod.context_section" | "pod.compaction_failed",
    message: string,
  ): void {
    this.parts.warn({ code, message });
    this.emit?.({ type: "warning", message });
  }

  private driftForked(fork: DriftFork): void {
    this.warn(
      "pod.drift_fork",
      `another writer changed segment ${fork.fromSegmentId} (${fork.actualCount} entries, expected ${fork.expectedCount}); continuing in ${fork.toSegmentId}`,
    );
    this.emit?.({ type: "drift_fork", fork });
  }
}
