import type { Item, ModelAdapter, Tool, ToolFactory, UsageRecord } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { type DriftFork, SessionLog, type SessionLogOptions, type Store } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextSection } from "../context/context-section.js";
import { PodUsageError } from "../errors.js";
import { SystemPromptTemplate } from "../system-prompt/system-prompt-template.js";
import { PodTelemetry, podIdentityOf, type RunSource } from "../telemetry/pod-telemetry.js";
import type { AfterTurnJob, AfterTurnJobContext } from "./after-turn-jobs.js";
import { PodBusyError, PodClosedError, PromptCancelledError } from "./errors.js";
import type { CompactionOutcome, PodEvent, PodRunResult, PodTrigger } from "./events.js";
import { PodExtensionPoints } from "./extension-points.js";
import type { PodHooks } from "./hooks.js";
import { podModelAdapter } from "./model.js";
import { NotificationQueue } from "./notification-queue.js";
import { NOTIFICATION_CAPACITY, type PodOptions } from "./pod-options.js";
import { isResumable, otherBranchesWarning } from "./pod-restore.js";
import { type Emit, PodRuns } from "./pod-runs.js";
import { PodSession } from "./pod-session.js";
import { loadParts, loadResources, type PodParts } from "./pod-setup.js";
import type { RunHandle } from "./run-handle.js";
import { runTurn } from "./turn.js";

/**
 * A pod (SPEC §4): a manifest's worker, tools, layered prompt catalog and session log wired
 * into one agent. Construction writes nothing and needs no API key; the system prompt is
 * rendered once at the first run and the session is created right after it.
 */
export class Pod {
  private readonly session: PodSession;
  private readonly extensionPoints: PodExtensionPoints;
  private readonly runs: PodRuns;
  private readonly queue = new NotificationQueue();
  private closed = false;
  /** Extension state by domain (restored from the log; features fold their own). */
  readonly extensions: Map<string, unknown>;
  private readonly telemetry: PodTelemetry;
  /** What a run's trace reads from the pod while the run goes on. */
  private readonly traceSource: RunSource = {
    session: () =>
      this.session.log === undefined
        ? undefined
        : { sessionId: this.session.log.state.sessionId, segmentId: this.session.log.state.segmentId },
    history: () => this.session.worker.history,
    systemPrompt: () => this.session.worker.systemPrompt,
  };

  private constructor(
    private readonly parts: PodParts,
    private readonly options: PodOptions,
    init: { template: SystemPromptTemplate | null; log?: SessionLog<Item> },
  ) {
    this.session = new PodSession(parts, options, init, {
      logOptions: Pod.logOptions(() => this),
      warn: (code, message) => this.warn(code, message),
      compactionWorkerEvent: (event) => this.telemetry.onJobWorkerEvent("compaction", event),
    });
    this.extensions = this.session.extensions;
    parts.toolWarnings.relay = (message) => this.runs.emit({ type: "warning", message });
    this.telemetry = new PodTelemetry(
      podIdentityOf(parts.loaded, options.model),
      this.traceSource,
      options.telemetry,
    );
    this.extensionPoints = new PodExtensionPoints((message) => {
      this.parts.warn({ code: "pod.after_turn_job", message });
      this.extensionPoints.publish({ type: "warning", message });
    });
    this.runs = new PodRuns({
      worker: this.session.worker,
      telemetry: this.telemetry,
      podSignal: options.signal,
      usageRecords: this.session.usageRecords,
      publish: (event) => this.extensionPoints.publish(event),
      execute: (trigger, input, signal, emit) => this.execute(trigger, input, signal, emit),
      settled: (turnFinished) => this.settled(turnFinished),
    });
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
    pod.session.state.resumable = isResumable(last);
    const branches = otherBranchesWarning(sessionId, log);
    if (branches !== undefined) pod.parts.warn({ code: "pod.other_branches", message: branches });
    return pod;
  }

  private static logOptions(pod: () => Pod | undefined): SessionLogOptions<Item> {
    return { onDriftFork: (fork) => pod()?.driftForked(fork) };
  }

  /** The session id, once the session exists (after the first run, or restored). */
  get sessionId(): string | undefined {
    return this.session.log?.state.sessionId;
  }

  /** The segment the pod writes to (it changes with compaction and drift forks). */
  get segmentId(): string | undefined {
    return this.session.log?.state.segmentId;
  }

  /** The layered prompt catalog every code path of this pod uses. */
  get catalog(): PromptCatalog {
    return this.session.catalog;
  }

  /** The rendered system prompt; undefined until the first run (or `renderSystemPrompt()`). */
  get systemPrompt(): string | undefined {
    return this.session.worker.systemPrompt;
  }

  get history(): readonly Item[] {
    return this.session.worker.history;
  }

  /** The request config (from `[worker]`, or the restored session's). */
  get config(): Readonly<Record<string, unknown>> {
    return this.session.worker.config;
  }

  /** Completed turns of the session. */
  get turn(): number {
    return this.session.state.turns;
  }

  /** True after a run that was aborted, cancelled, paused or failed. */
  get interrupted(): boolean {
    return this.session.worker.lastRunInterrupted;
  }

  /** Every usage record of the session's head segment, one per model request. */
  get usage(): readonly UsageRecord[] {
    return this.session.usageRecords;
  }

  /** Registers hooks; after the first run they are frozen (`HooksFrozenError`). */
  addHooks(hooks: PodHooks): void {
    this.extensionPoints.addHooks(hooks);
  }

  /**
   * Registers background work run after each finished turn (one pass at a time, coalescing;
   * failures become warnings). Like hooks, only before the first run.
   */
  addAfterTurnJob(job: AfterTurnJob): void {
    this.extensionPoints.addAfterTurnJob(job);
  }

  /** Adds a tool (or factory) for the main worker; only before the tool list is final (first run). */
  registerTool(tool: Tool | ToolFactory): void {
    this.parts.toolServer.registerTool(tool);
  }

  /** Receives every event the pod reports, those of runs and those of background jobs; returns an unsubscribe. */
  subscribe(listener: (event: PodEvent) => void): () => void {
    return this.extensionPoints.subscribe(listener);
  }

  /** Resolves when no after-turn job is running. */
  async whenJobsIdle(): Promise<void> {
    await this.extensionPoints.afterTurn.idle();
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
    await this.extensionPoints.turnGate.passed();
    const log = this.session.log;
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
    this.session.context.sections.add(section as ContextSection);
  }

  /** True once three automatic compactions in a row failed: the pod goes on without compacting. */
  get compactionDisabled(): boolean {
    return this.session.compaction.disabled;
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
    await this.extensionPoints.afterTurn.idle();
    if (this.runs.busy) {
      throw new PodBusyError("the pod is running a turn: compact when it is idle", {
        hint: "await the running handle (or pod.whenIdle()) first",
      });
    }
    const signals = [options.signal, this.options.signal].filter((s) => s !== undefined);
    const signal = signals.length === 0 ? new AbortController().signal : AbortSignal.any(signals);
    const work = this.session.compaction.compact("manual", this.session.compactionHost(), signal, (event) => {
      this.telemetry.onJobEvent(event);
      options.onEvent?.(event);
    });
    return this.runs.occupy(work);
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
    this.runs.interrupt(reason);
  }

  /** Resolves when no run is in progress (including runs `autoRun` started). */
  async whenIdle(): Promise<void> {
    await this.runs.whenIdle();
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
    if (this.options.autoRun === true && !this.runs.busy && !this.closed) {
      this.start("notify", undefined, undefined).result.catch(() => {});
    }
  }

  /**
   * Renders the system prompt now, as the first run would (tools flushed, AGENTS.md read, one
   * clock reading), without creating the session — what `podkit prompt render` shows.
   */
  renderSystemPrompt(): Promise<string> {
    return this.session.ensureSystemPromptMaterialized();
  }

  /**
   * Creates the session now, as the first run would (system prompt materialized, `segment_start`
   * written), and returns its id; a pod that already has its session returns that id. For callers
   * that write to the session before any run, e.g. `@podkit/dispatch` committing a run's input.
   */
  async startSession(): Promise<string> {
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    if (this.runs.busy) {
      throw new PodBusyError("the pod is running a turn, which creates the session itself", {
        hint: "await the running handle first",
      });
    }
    const systemPrompt = await this.session.ensureSystemPromptMaterialized();
    return (await this.session.ensureSessionHead(systemPrompt)).state.sessionId;
  }

  /** Aborts a run in progress and closes the tools (MCP servers, package clean-up). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.interrupt("the pod was closed");
    await this.whenIdle();
    await this.extensionPoints.afterTurn.close();
    await this.parts.toolSet.close();
    if (this.options.store === undefined) await this.parts.store.close();
  }

  private start(trigger: PodTrigger, input: string | undefined, signal: AbortSignal | undefined): RunHandle {
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    return this.runs.start(trigger, input, signal);
  }

  /** A run ended: the after-turn jobs are due after a finished turn; `autoRun` serves queued notifications. */
  private settled(turnFinished: boolean): void {
    if (turnFinished) this.extensionPoints.afterTurn.schedule(() => this.afterTurnContext());
    if (this.options.autoRun === true && this.queue.size > 0 && !this.closed) {
      this.start("notify", undefined, undefined).result.catch(() => {});
    }
  }

  /** The run prelude (§4.1 order), then one turn, persisted and closed whatever happens. */
  private async execute(
    trigger: PodTrigger,
    input: string | undefined,
    signal: AbortSignal,
    emit: Emit,
  ): Promise<PodRunResult> {
    const { session } = this;
    this.installInterceptor();
    const systemPrompt = await session.ensureSystemPromptMaterialized();
    await session.recorder.closeCrashedTurn(await session.ensureSessionHead(systemPrompt));
    // A background job (memory extract) reads the segment a compaction replaces: let it finish first.
    if (session.compaction.dueBeforeTurn(session.compactionHost()))
      await this.extensionPoints.afterTurn.idle();
    await session.compaction.compactBeforeTurn(session.compactionHost(), signal, emit);
    if (input !== undefined) {
      for (const hook of this.extensionPoints.hooks) {
        const decision = await hook.onPromptSubmit?.(Object.freeze({ text: input }));
        if (decision?.action === "cancel") throw new PromptCancelledError(decision.reason);
      }
    }
    session.runSignal = signal;
    // Open from the turn's invoke to its terminal entry: background extension appends wait for it.
    const closeTurnGate = this.extensionPoints.turnGate.open();
    try {
      return await runTurn(session.turnHost(), { trigger, input, signal, emit });
    } finally {
      session.runSignal = undefined;
      closeTurnGate();
    }
  }

  private installInterceptor(): void {
    if (this.extensionPoints.frozen) return;
    this.session.installInterceptor(this.extensionPoints.hooks, () => this.takeNotifications());
    this.extensionPoints.freeze();
  }

  /** The context of an after-turn pass: the head segment as it is when the pass starts. */
  private afterTurnContext(): AfterTurnJobContext | undefined {
    const log = this.session.log;
    if (log === undefined || this.closed) return undefined;
    const ref = { sessionId: log.state.sessionId, segmentId: log.state.segmentId };
    const store = this.parts.store as Store<Item>;
    return {
      ...ref,
      signal: this.extensionPoints.afterTurn.signal,
      extension: (domain) => this.extensions.get(domain),
      readEntries: () => store.readAll(ref),
      appendExtension: (domain, payload) => this.appendExtension(domain, payload),
      emit: (event) => {
        this.telemetry.onJobEvent(event);
        this.extensionPoints.publish(event);
      },
      onWorkerEvent: (job, event) => this.telemetry.onJobWorkerEvent(job, event),
    };
  }

  private takeNotifications(): Item[] {
    return this.queue.drain().map((message) => {
      this.runs.emit({ type: "notification", message });
      return this.session.recorder.systemMessage(
        "notification",
        this.catalog.render("notify_wrapper", { message }),
      );
    });
  }

  private warn(
    code: "pod.notifications_dropped" | "pod.drift_fork" | "pod.context_section" | "pod.compaction_failed",
    message: string,
  ): void {
    this.parts.warn({ code, message });
    this.runs.emit({ type: "warning", message });
  }

  private driftForked(fork: DriftFork): void {
    this.warn(
      "pod.drift_fork",
      `another writer changed segment ${fork.fromSegmentId} (${fork.actualCount} entries, expected ${fork.expectedCount}); continuing in ${fork.toSegmentId}`,
    );
    this.runs.emit({ type: "drift_fork", fork });
  }
}
