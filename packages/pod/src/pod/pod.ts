import type { Item, ModelAdapter, Tool, ToolFactory, UsageRecord } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { type ApprovalRecord, isPendingApproval, type Store } from "@podkit/session-store";
import type { z } from "zod";
import { PodBudget } from "../budget/pod-budget.js";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextSection } from "../context/context-section.js";
import { PodUsageError } from "../errors.js";
import type { ChildPodInfo } from "../subpods/children.js";
import type { SubpodHost } from "../subpods/subpod-host.js";
import { PodTelemetry, podIdentityOf } from "../telemetry/pod-telemetry.js";
import { afterTurnContextOf } from "./after-turn-context.js";
import { type AfterTurnJob, type AfterTurnJobContext, CLOSE_PASS_TIMEOUT_MS } from "./after-turn-jobs.js";
import type { ApprovalAnswerGiven } from "./approvals.js";
import { PodBusyError, PodClosedError } from "./errors.js";
import type { CompactionOutcome, PodEvent, PodRunResult, PodTrigger } from "./events.js";
import { PodExtensionPoints } from "./extension-points.js";
import type { PodHooks } from "./hooks.js";
import { podModelAdapter } from "./model.js";
import { buildPod, type PodParts, restorePod } from "./open-pod.js";
import { hostPodChildren } from "./pod-children.js";
import { PodEngine } from "./pod-engine.js";
import { closeFoundation, type PodFoundation } from "./pod-foundation.js";
import type { PodOptions } from "./pod-options.js";
import { anySignal, PodRuns } from "./pod-runs.js";
import type { PodRunOptions, RunHandle, TypedRunHandle } from "./run-handle.js";
import { type RunParts, runWithPrelude } from "./run-prelude.js";
import type { InterruptCause } from "./session-recorder.js";

/**
 * A pod: a manifest's worker, tools, layered prompt catalog and session log wired
 * into one agent. Construction writes nothing and needs no API key; the system prompt is
 * rendered once at the first run and the session is created right after it.
 */
export class Pod {
  private readonly foundation: PodFoundation;
  private readonly options: PodOptions;
  private readonly engine: PodEngine;
  private readonly telemetry: PodTelemetry;
  private readonly extensionPoints: PodExtensionPoints;
  private readonly runs: PodRuns;
  /** The children this pod spawned (only when its manifest declares roles). */
  private readonly subpods: SubpodHost | undefined;
  /** `[budget]` (its own, and the tree's it draws on); undefined when no cap applies. */
  private readonly budget: PodBudget | undefined;
  private closed = false;
  /** Extension state by domain (restored from the log; features fold their own). */
  readonly extensions: Map<string, unknown>;

  // Each part is built from those before it only, so no callback can reach a part not yet built.
  private constructor({ foundation, options, start, roles }: PodParts) {
    this.foundation = foundation;
    this.options = options;
    this.engine = new PodEngine(foundation, options, start);
    this.extensions = this.engine.extensions;
    this.telemetry = new PodTelemetry(
      podIdentityOf(foundation.loaded, options.model),
      this.engine.runSource(),
      options.telemetry,
      options.subpod?.traceParent,
    );
    this.extensionPoints = new PodExtensionPoints(foundation.warn);
    this.budget = PodBudget.of(foundation.loaded.manifest.budget, options.subpod?.budget, {
      store: foundation.store,
      sessionId: () => this.sessionId,
      records: () => this.engine.usage.records,
      runRecords: () => this.engine.usage.runRecords(),
      now: Date.now,
    });
    if (this.budget !== undefined) this.extensionPoints.addHooks(this.budget.hooks());
    const { engine, extensionPoints, telemetry, budget } = this;
    const parts: RunParts = { engine, extensionPoints, telemetry, budget, events: foundation.events };
    this.runs = new PodRuns(
      {
        worker: engine.worker,
        telemetry,
        events: foundation.events,
        warn: foundation.warn,
        podSignal: options.signal,
      },
      {
        execute: (trigger, input, signal) => runWithPrelude(parts, trigger, input, signal),
        settled: (turnFinished) => this.settled(turnFinished),
      },
    );
    const children = { ...parts, foundation, options, pod: this, factory: POD_FACTORY };
    this.subpods = roles.size === 0 ? undefined : hostPodChildren(children, roles);
  }

  /**
   * Builds a pod from a loaded manifest: the layered catalog (through `loadPodResources`), the
   * parsed system prompt template (`InvalidSystemPromptTemplateError` on a syntax error) and the
   * tool packages; with `[memory]`, memory attached (`attachManifestMemory`). Nothing is written
   * and no API key is read.
   */
  static fromManifest(loaded: LoadedManifest, options: PodOptions = {}): Promise<Pod> {
    return buildPod(loaded, options, (parts) => new Pod(parts));
  }

  /**
   * Restores session `sessionId` from its head segment (docs/pod.md, "Construction and restore"): the stored prompt
   * verbatim, history, config, turns, usage and extension state; a sub-pod's session with its
   * role's manifest, loan and depth. What was opened for it is closed when it cannot be opened.
   */
  static restore(loaded: LoadedManifest, sessionId: string, options: PodOptions = {}): Promise<Pod> {
    return restorePod(loaded, sessionId, options, (parts) => new Pod(parts));
  }

  /** The session id, once the session exists (after the first run, or restored). */
  get sessionId(): string | undefined {
    return this.engine.log?.state.sessionId;
  }

  /** The segment the pod writes to (it changes with compaction and drift forks). */
  get segmentId(): string | undefined {
    return this.engine.log?.state.segmentId;
  }

  /** The layered prompt catalog every code path of this pod uses. */
  get catalog(): PromptCatalog {
    return this.engine.catalog;
  }

  /** The rendered system prompt; undefined until the first run (or `renderSystemPrompt()`). */
  get systemPrompt(): string | undefined {
    return this.engine.worker.systemPrompt;
  }

  get history(): readonly Item[] {
    return this.engine.worker.history;
  }

  /** The request config (from `[worker]`, or the restored session's). */
  get config(): Readonly<Record<string, unknown>> {
    return this.engine.worker.config;
  }

  /** Completed turns of the session. */
  get turn(): number {
    return this.engine.turns.turns;
  }

  /** True after a run that was aborted, cancelled, paused or failed. */
  get interrupted(): boolean {
    return this.engine.worker.lastRunInterrupted;
  }

  /** Every usage record of the session's head segment, one per model request. */
  get usage(): readonly UsageRecord[] {
    return this.engine.usage.records;
  }

  /** Every approval of the session's head segment, pending or answered, in request order. */
  get approvals(): readonly ApprovalRecord[] {
    return this.engine.log?.state.approvals ?? [];
  }

  /** The last run ended `awaiting_approval` and no run started since: `resume()` continues it. */
  get awaitingApproval(): boolean {
    return this.engine.log?.state.awaitingApproval === true;
  }

  /** The approvals still waiting for an answer (a run ended `awaiting_approval` on them). */
  get pendingApprovals(): readonly ApprovalRecord[] {
    return this.approvals.filter(isPendingApproval);
  }

  /**
   * Answers the pending approval of tool call `callId` (docs/approvals.md), from this process or
   * any other that restored the session: commits `approval_answered` with the decision, `by`
   * (default: the local user and host) and the time, only if nobody else wrote to the session
   * meanwhile — of two answerers exactly one is recorded, the other gets
   * `ApprovalAlreadyAnsweredError` naming who answered and when. Unknown call
   * (`ApprovalNotFoundError`), a call no longer pending (`ApprovalNotPendingError`), a malformed
   * answer (`InvalidApprovalAnswerError`): nothing is written. Then `resume()` goes on once every
   * pending call of the batch is answered. `PodBusyError` while a run is in progress.
   */
  async answerApproval(callId: string, answer: ApprovalAnswerGiven): Promise<ApprovalRecord> {
    this.assertIdle(
      "answer approvals when it is idle",
      "await the running handle (or pod.whenIdle()) first; a live run asks its approver",
    );
    return this.runs.occupy(this.engine.answerApproval(callId, answer));
  }

  /**
   * The child pods of this pod's session (sub-pods, docs/subpods.md), oldest first: those this
   * pod holds and those only in the store (a restored parent's). Empty before the session exists.
   */
  async children(): Promise<ChildPodInfo[]> {
    return this.subpods?.children() ?? [];
  }

  /** Registers hooks; after the first run they are frozen (`HooksFrozenError`). */
  addHooks(hooks: PodHooks): void {
    this.extensionPoints.addHooks(hooks);
  }

  /**
   * Registers background work run after each finished turn (one pass at a time, coalescing;
   * failures become warnings), and once more at `close()` when it asks for it (`runOnClose`).
   * Like hooks, only before the first run.
   */
  addAfterTurnJob(job: AfterTurnJob): void {
    this.extensionPoints.addAfterTurnJob(job);
  }

  /** Adds a tool (or factory) for the main worker; only before the tool list is final (first run). */
  registerTool(tool: Tool | ToolFactory): void {
    this.foundation.toolServer.registerTool(tool);
  }

  /**
   * Receives every event the pod reports, those of runs and those of background jobs; returns an
   * unsubscribe. A listener that throws is reported as a `pod.listener` warning, never to the run.
   */
  subscribe(listener: (event: PodEvent) => void): () => void {
    return this.foundation.events.subscribe(listener);
  }

  /** Resolves when no after-turn job is running. */
  async whenJobsIdle(): Promise<void> {
    await this.extensionPoints.afterTurn.idle();
  }

  /** The loaded manifest the pod was built from. */
  get manifest(): LoadedManifest {
    return this.foundation.loaded;
  }

  /** The model adapter of the manifest's model (with the pod's overrides), for a feature's own workers. */
  get modelAdapter(): ModelAdapter {
    const { model, env = process.env } = this.options;
    return podModelAdapter(this.foundation.loaded.manifest.model, model, env);
  }

  /**
   * Appends an `extension` entry to the session through the pod's own writer, after any turn in
   * progress (it never lands inside a turn, so a rolled-back turn cannot take it along), and
   * updates `extensions`. Needs the session to exist (after the first run, or restored).
   */
  async appendExtension(domain: string, payload: unknown): Promise<void> {
    await this.extensionPoints.turnGate.passed();
    if (this.engine.log === undefined) {
      throw new PodUsageError(
        "appendExtension needs the session: it exists after the first run (or on a restored pod)",
      );
    }
    await this.engine.appendExtension(domain, payload);
  }

  /** Registers a context section after `notes` and `PodOptions.contextSections` (before the first run). */
  addContextSection<T>(section: ContextSection<T>): void {
    this.engine.context.sections.add(section as ContextSection);
  }

  /** True once three automatic compactions in a row failed: the pod goes on without compacting. */
  get compactionDisabled(): boolean {
    return this.engine.compaction.disabled;
  }

  /**
   * Compacts the session now (`podkit compact`) into a new segment, with `[compaction]`
   * or its defaults. Resolves `skipped` before the first run; rejects with the typed compaction
   * error (nothing changed) on failure, and with `PodBusyError` while a run is in progress.
   */
  async compact(
    options: { signal?: AbortSignal; onEvent?: (event: PodEvent) => void } = {},
  ): Promise<CompactionOutcome> {
    this.assertIdle("compact when it is idle");
    // A background job (memory extract) reads the segment being compacted: let it finish first.
    await this.extensionPoints.afterTurn.idle();
    this.assertIdle("compact when it is idle");
    const signal = anySignal([options.signal, this.options.signal]);
    return this.runs.occupy(this.engine.compactNow(signal, this.telemetry, options.onEvent));
  }

  /** Starts a turn for `input` (an async iterable of events, a promise of the result); `output`: docs/output.md. */
  run<S extends z.ZodType>(input: string, options: PodRunOptions & { output: S }): TypedRunHandle<S>;
  run(input: string, options?: PodRunOptions): RunHandle<PodRunResult & { output?: unknown }>;
  run(input: string, options: PodRunOptions = {}): RunHandle {
    if (options.output !== undefined && !this.closed) this.engine.adoptOutput(options.output);
    return this.start("user", input, options.signal);
  }

  /**
   * Continues a paused or yielded turn without new input. After an interrupted turn, the closing
   * notes tell the model why it stopped; `interruptCause` says so when the caller knows better than
   * the log (`moved`: a dispatcher continues a run another worker held).
   */
  resume(options: { signal?: AbortSignal; interruptCause?: InterruptCause } = {}): RunHandle {
    return this.start("resume", undefined, options.signal, options.interruptCause);
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
    this.engine.notifications.push(message);
    if (this.options.autoRun === true && !this.runs.busy && !this.closed) {
      this.start("notify", undefined, undefined).result.catch(() => {});
    }
  }

  /**
   * Renders the system prompt now, as the first run would (tools flushed, AGENTS.md read, one
   * clock reading), without creating the session — what `podkit prompt render` shows. A run
   * started meanwhile shares this render.
   */
  renderSystemPrompt(): Promise<string> {
    return this.engine.ensureSystemPromptMaterialized();
  }

  /**
   * Creates the session now, as the first run would (system prompt materialized, `segment_start`
   * written), and returns its id; a pod that already has its session returns that id. For callers
   * that write to the session before any run, e.g. `@podkit/dispatch` committing a run's input.
   */
  async startSession(): Promise<string> {
    this.assertIdle("it creates the session itself", "await the running handle first");
    const systemPrompt = await this.engine.ensureSystemPromptMaterialized();
    return (await this.engine.ensureSessionHead(systemPrompt)).state.sessionId;
  }

  /**
   * Aborts a run in progress, runs the final pass of the after-turn jobs that asked for one
   * (`runOnClose`; bounded by `timeoutMs`, default 30 s, and `signal`), then closes the tools
   * (MCP servers, package clean-up) and a store the pod opened.
   */
  async close(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.interrupt("the pod was closed");
    await this.whenIdle();
    await this.subpods?.close();
    await this.extensionPoints.afterTurn.close(() => this.afterTurnContext(true), {
      timeoutMs: options.timeoutMs ?? CLOSE_PASS_TIMEOUT_MS,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    await closeFoundation(this.foundation);
  }

  /** Refuses a call on a closed pod, or while a run (or a compaction) is in progress: `busy` says what to do. */
  private assertIdle(busy: string, hint = "await the running handle (or pod.whenIdle()) first"): void {
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    if (this.runs.busy) throw new PodBusyError(`the pod is running a turn: ${busy}`, { hint });
  }

  /** The context of an after-turn pass (`final`: the pass at close). */
  private afterTurnContext(final = false): AfterTurnJobContext | undefined {
    const { engine, extensionPoints, telemetry, foundation } = this;
    const store = foundation.store as Store<Item>;
    const appendExtension = (domain: string, payload: unknown) => this.appendExtension(domain, payload);
    return afterTurnContextOf(
      { engine, store, extensionPoints, telemetry, events: foundation.events, appendExtension },
      final,
    );
  }

  private start(
    trigger: PodTrigger,
    input: string | undefined,
    signal: AbortSignal | undefined,
    interruptCause?: InterruptCause,
  ): RunHandle {
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    // Not while busy: that start is refused, and the run in progress keeps what it was given.
    if (!this.runs.busy) this.engine.recorder.announceInterruptCause(interruptCause);
    return this.runs.start(trigger, input, signal);
  }

  /** A run ended: the after-turn jobs are due after a finished turn; `autoRun` serves queued notifications. */
  private settled(turnFinished: boolean): void {
    if (turnFinished && !this.closed) this.extensionPoints.afterTurn.schedule(() => this.afterTurnContext());
    if (this.options.autoRun === true && this.engine.notifications.size > 0 && !this.closed) {
      this.start("notify", undefined, undefined).result.catch(() => {});
    }
  }
}

/** The constructors a pod opens its children with. */
const POD_FACTORY = {
  fromManifest: (loaded: LoadedManifest, options: PodOptions) => Pod.fromManifest(loaded, options),
  restore: (loaded: LoadedManifest, id: string, options: PodOptions) => Pod.restore(loaded, id, options),
};
