import type { Item, ModelAdapter, Tool, ToolFactory, UsageRecord } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { type ApprovalRecord, isPendingApproval, SessionLog, type Store } from "@podkit/session-store";
import { type BudgetExhausted, PodBudget } from "../budget/pod-budget.js";
import { TreeBudget } from "../budget/tree-budget.js";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextSection } from "../context/context-section.js";
import { PodUsageError } from "../errors.js";
import type { ChildPodInfo } from "../subpods/children.js";
import { loadSubpodRoles, type SubpodRole } from "../subpods/roles.js";
import { SubpodHost } from "../subpods/subpod-host.js";
import { subpodTools } from "../subpods/subpod-tools.js";
import { SystemPromptTemplate } from "../system-prompt/system-prompt-template.js";
import { PodTelemetry, podIdentityOf, type RunSource } from "../telemetry/pod-telemetry.js";
import { processWarningSink } from "../warnings.js";
import { type AfterTurnJob, type AfterTurnJobContext, CLOSE_PASS_TIMEOUT_MS } from "./after-turn-jobs.js";
import type { ApprovalAnswerGiven } from "./approvals.js";
import { PodBusyError, PodClosedError, PromptCancelledError } from "./errors.js";
import type { CompactionOutcome, PodEvent, PodRunResult, PodTrigger } from "./events.js";
import { PodExtensionPoints } from "./extension-points.js";
import type { PodHooks } from "./hooks.js";
import { attachManifestMemory } from "./memory-selection.js";
import { podModelAdapter } from "./model.js";
import type { CompactionReporting } from "./pod-compaction.js";
import { PodEngine, type PodEngineStart } from "./pod-engine.js";
import {
  closeFoundation,
  loadFoundation,
  loadResources,
  type PodFoundation,
  sessionLogOptions,
} from "./pod-foundation.js";
import type { PodOptions } from "./pod-options.js";
import { isResumable, otherBranchesWarning } from "./pod-restore.js";
import { anySignal, PodRuns } from "./pod-runs.js";
import type { RunHandle } from "./run-handle.js";

/**
 * A pod: a manifest's worker, tools, layered prompt catalog and session log wired
 * into one agent. Construction writes nothing and needs no API key; the system prompt is
 * rendered once at the first run and the session is created right after it.
 */
export class Pod {
  private readonly engine: PodEngine;
  private readonly telemetry: PodTelemetry;
  private readonly extensionPoints: PodExtensionPoints;
  private readonly runs: PodRuns;
  /** The children this pod spawned (only when its manifest declares roles). */
  private readonly subpods: SubpodHost | undefined;
  /** `[budget]` (its own, and the tree's it draws on); undefined when no cap applies. */
  private readonly budget: { tree: TreeBudget; pod: PodBudget } | undefined;
  private closed = false;
  /** Extension state by domain (restored from the log; features fold their own). */
  readonly extensions: Map<string, unknown>;

  // Each part is built from those before it only, so no callback can reach a part not yet built.
  private constructor(
    private readonly foundation: PodFoundation,
    private readonly options: PodOptions,
    start: PodEngineStart,
    roles: ReadonlyMap<string, SubpodRole> = new Map(),
  ) {
    this.engine = new PodEngine(foundation, options, start);
    this.extensions = this.engine.extensions;
    this.telemetry = new PodTelemetry(
      podIdentityOf(foundation.loaded, options.model),
      runSourceOf(this.engine),
      options.telemetry,
      options.subpod?.traceParent,
    );
    this.extensionPoints = new PodExtensionPoints(foundation.warn);
    this.runs = new PodRuns(
      {
        worker: this.engine.worker,
        telemetry: this.telemetry,
        events: foundation.events,
        warn: foundation.warn,
        podSignal: options.signal,
      },
      {
        execute: (trigger, input, signal) => this.execute(trigger, input, signal),
        settled: (turnFinished) => this.settled(turnFinished),
      },
    );
    this.budget = this.budgetOf();
    this.subpods = roles.size === 0 ? undefined : this.hostChildren(roles);
  }

  /**
   * Builds a pod from a loaded manifest: the layered catalog (through `loadPodResources`), the
   * parsed system prompt template (`InvalidSystemPromptTemplateError` on a syntax error) and the
   * tool packages; with `[memory]`, memory attached (`attachManifestMemory`). Nothing is written
   * and no API key is read.
   */
  static async fromManifest(loaded: LoadedManifest, options: PodOptions = {}): Promise<Pod> {
    const resources = await loadResources(loaded, options);
    const template = SystemPromptTemplate.parse(loaded.manifest.worker.system_prompt, resources.loader);
    const roles = await subpodRolesOf(loaded, options);
    const foundation = await loadFoundation(loaded, resources, options);
    return withManifestMemory(new Pod(foundation, options, { template }, roles), loaded, options);
  }

  /**
   * Restores session `sessionId` from its head segment: the stored system prompt verbatim (the
   * template is never parsed), history, config, turn count, interrupted flag, usage and extension
   * state. Later entries are appended to that segment. When the session cannot be opened, what
   * was opened for it (the tools, a store the pod opened) is closed before the error is thrown.
   * With `[memory]`, memory is attached as by `fromManifest`.
   */
  static async restore(loaded: LoadedManifest, sessionId: string, options: PodOptions = {}): Promise<Pod> {
    const resources = await loadResources(loaded, options);
    const roles = await subpodRolesOf(loaded, options);
    const foundation = await loadFoundation(loaded, resources, options);
    let pod: Pod;
    try {
      const log = await SessionLog.open(foundation.store, sessionId, sessionLogOptions(foundation));
      const { last } = await foundation.store.describeSegment({
        sessionId: log.state.sessionId,
        segmentId: log.state.segmentId,
      });
      pod = new Pod(foundation, options, { restored: log, resumable: isResumable(last, log) }, roles);
      const branches = otherBranchesWarning(sessionId, log);
      if (branches !== undefined) foundation.warn({ code: "pod.other_branches", message: branches });
    } catch (error) {
      await closeFoundation(foundation);
      throw error;
    }
    return withManifestMemory(pod, loaded, options);
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
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    if (this.runs.busy) {
      throw new PodBusyError("the pod is running a turn: answer approvals when it is idle", {
        hint: "await the running handle (or pod.whenIdle()) first; a live run asks its approver",
      });
    }
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
    return podModelAdapter(
      this.foundation.loaded.manifest.model,
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
    if (this.engine.log === undefined) {
      throw new PodUsageError(
        "appendExtension needs the session: it exists after the first run (or on a restored pod)",
      );
    }
    await this.engine.appendExtension(domain, payload);
  }

  /**
   * Registers a context section after the builtin `notes` and `PodOptions.contextSections`;
   * like hooks, only before the first run.
   */
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
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    // A background job (memory extract) reads the segment being compacted: let it finish first.
    await this.extensionPoints.afterTurn.idle();
    if (this.runs.busy) {
      throw new PodBusyError("the pod is running a turn: compact when it is idle", {
        hint: "await the running handle (or pod.whenIdle()) first",
      });
    }
    const signal = anySignal([options.signal, this.options.signal]);
    const work = this.engine.compact("manual", signal, {
      emit: (event) => {
        this.telemetry.onJobEvent(event);
        options.onEvent?.(event);
      },
      workerEvent: (event) => this.telemetry.onCompactionWorkerEvent(event),
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
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    if (this.runs.busy) {
      throw new PodBusyError("the pod is running a turn, which creates the session itself", {
        hint: "await the running handle first",
      });
    }
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

  /** The pod's budget: its own `[budget]` caps and the tree's (a root's own, a child's from its parent). */
  private budgetOf(): { tree: TreeBudget; pod: PodBudget } | undefined {
    const caps = this.foundation.loaded.manifest.budget;
    const inherited = this.options.subpod?.budget;
    if (caps === undefined && inherited === undefined) return undefined;
    const tree = inherited ?? new TreeBudget(caps ?? {});
    const { engine } = this;
    const pod = new PodBudget(caps ?? {}, tree, {
      store: this.foundation.store,
      sessionId: () => this.sessionId,
      records: () => engine.usage.records,
      runRecords: () => engine.usage.runRecords(),
      root: inherited === undefined,
      now: Date.now,
    });
    this.extensionPoints.addHooks(pod.hooks());
    return { tree, pod };
  }

  /** The host of this pod's children, and the four tools its model gets for them. */
  private hostChildren(roles: ReadonlyMap<string, SubpodRole>): SubpodHost {
    const { foundation } = this;
    const host = new SubpodHost(
      {
        sessionId: () => this.sessionId,
        store: foundation.store,
        scope: foundation.loaded.scope,
        workspace: foundation.loaded.workspace,
        options: this.options,
        emit: (event) => foundation.events.emit(event),
        notify: (message) => this.notify(message),
        warn: foundation.warn,
        budget: this.budget?.tree,
        toolTraceContext: (callId) => this.telemetry.toolContext(callId),
        open: (role, options, sessionId) =>
          sessionId === undefined
            ? Pod.fromManifest(role.loaded, options)
            : Pod.restore(role.loaded, sessionId, options),
      },
      roles,
    );
    const depth = this.options.subpod?.link.depth ?? 0;
    for (const tool of subpodTools(roles, host, depth)) foundation.toolServer.registerTool(tool);
    return host;
  }

  private start(trigger: PodTrigger, input: string | undefined, signal: AbortSignal | undefined): RunHandle {
    if (this.closed) throw new PodClosedError("the pod is closed", { hint: "create or restore a new pod" });
    return this.runs.start(trigger, input, signal);
  }

  /** A run ended: the after-turn jobs are due after a finished turn; `autoRun` serves queued notifications. */
  private settled(turnFinished: boolean): void {
    if (turnFinished && !this.closed) this.extensionPoints.afterTurn.schedule(() => this.afterTurnContext());
    if (this.options.autoRun === true && this.engine.notifications.size > 0 && !this.closed) {
      this.start("notify", undefined, undefined).result.catch(() => {});
    }
  }

  /** The run prelude (in the order of docs/pod.md), then one turn, persisted and closed whatever happens. */
  private async execute(
    trigger: PodTrigger,
    input: string | undefined,
    signal: AbortSignal,
  ): Promise<PodRunResult> {
    const { engine } = this;
    if (!this.extensionPoints.frozen) {
      engine.installInterceptor(this.extensionPoints.hooks);
      this.extensionPoints.freeze();
    }
    const systemPrompt = await engine.ensureSystemPromptMaterialized();
    if (await engine.recorder.closeCrashedTurn(await engine.ensureSessionHead(systemPrompt)))
      engine.turns.ended("awaiting_approval");
    const report: CompactionReporting = {
      emit: (event) => this.foundation.events.emit(event),
      workerEvent: (event) => this.telemetry.onCompactionWorkerEvent(event),
    };
    // A background job (memory extract) reads the segment a compaction replaces: let it finish first.
    // A resume awaiting approval continues the very batch it stopped in: no compaction in between.
    const awaitingApproval = engine.log?.state.awaitingApproval === true;
    if (engine.compactionDueBeforeTurn && !awaitingApproval) await this.extensionPoints.afterTurn.idle();
    if (!awaitingApproval) await engine.compactBeforeTurn(signal, report);
    if (input !== undefined) {
      for (const hook of this.extensionPoints.hooks) {
        const decision = await hook.onPromptSubmit?.(Object.freeze({ text: input }), engine.hookPod());
        if (decision?.action === "cancel") throw new PromptCancelledError(decision.reason);
      }
    }
    // Open from the turn's invoke to its terminal entry: background extension appends wait for it.
    let stopped: BudgetExhausted | undefined;
    const closeTurnGate = this.extensionPoints.turnGate.open();
    try {
      await this.budget?.pod.startRun();
      const result = await engine.runTurn({ trigger, input, signal, report }).finally(() => {
        stopped = this.budget?.pod.endRun();
      });
      if (stopped === undefined) return result;
      // Recorded beside the `run_completed{yielded}` of the turn the cap stopped.
      await engine.appendExtension("budget", stopped);
      return { ...result, stopReason: { kind: "budget_exhausted", raw: undefined }, budget: stopped };
    } finally {
      closeTurnGate();
    }
  }

  /** The context of an after-turn pass (`final`: the pass at close): the head segment as it is when the pass starts. */
  private afterTurnContext(final = false): AfterTurnJobContext | undefined {
    const log = this.engine.log;
    if (log === undefined) return undefined;
    const ref = { sessionId: log.state.sessionId, segmentId: log.state.segmentId };
    const store = this.foundation.store as Store<Item>;
    return {
      ...ref,
      signal: this.extensionPoints.afterTurn.signal,
      final,
      extension: (domain) => this.extensions.get(domain),
      readEntries: (segmentId = ref.segmentId) => store.readAll({ sessionId: ref.sessionId, segmentId }),
      readFrom: (segment, from) =>
        store.readFrom(segment, from, { signal: this.extensionPoints.afterTurn.signal }),
      appendExtension: (domain, payload) => this.appendExtension(domain, payload),
      emit: (event) => {
        this.telemetry.onJobEvent(event);
        this.foundation.events.publish(event);
      },
      onWorkerEvent: (job, event) => this.telemetry.onJobWorkerEvent(job, event),
    };
  }
}

/** The pod with the memory its manifest's `[memory]` asks for; closed when that fails. */
async function withManifestMemory(pod: Pod, loaded: LoadedManifest, options: PodOptions): Promise<Pod> {
  try {
    await attachManifestMemory(pod, loaded, options);
    return pod;
  } catch (error) {
    await pod.close();
    throw error;
  }
}

/** What a run's trace reads from the pod's engine while the run goes on. */
function runSourceOf(engine: PodEngine): RunSource {
  return {
    session: () => {
      const log = engine.log;
      return log === undefined
        ? undefined
        : { sessionId: log.state.sessionId, segmentId: log.state.segmentId };
    },
    history: () => engine.worker.history,
    systemPrompt: () => engine.worker.systemPrompt,
  };
}

/** The roles a pod may spawn; a child leaves out (with a warning) those its own loan cannot cover. */
function subpodRolesOf(
  loaded: LoadedManifest,
  options: PodOptions,
): Promise<ReadonlyMap<string, SubpodRole>> {
  if (options.subpod === undefined) return loadSubpodRoles(loaded);
  return loadSubpodRoles(loaded, { warn: options.onWarning ?? processWarningSink });
}
