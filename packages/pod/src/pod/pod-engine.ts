import type { Item, Worker } from "@podkit/llm-worker";
import type { PermissionMode } from "@podkit/manifest";
import type { Store } from "@podkit/session-store";
import {
  type ApprovalRecord,
  type AwaitedApproval,
  answerApproval,
  approvalsAwaitedBy,
  localAnswerer,
  POLICY_DECISION_DOMAIN,
  type PolicyDecision,
  SessionLog,
} from "@podkit/session-store";
import { SANDBOX_PROBE_DOMAIN } from "@podkit/tools";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextSectionState } from "../context/context-section.js";
import { EMPTY_CONTEXT_KEY } from "../context/context-sections.js";
import { PodUsageError } from "../errors.js";
import { PodMediaStore } from "../media/pod-media-store.js";
import { type OutputSchemaInput, toOutputSchema } from "../output/output-schema.js";
import { FINAL_OUTPUT_DOMAIN, PodOutput } from "../output/pod-output.js";
import { builtinPolicyFor, effectiveMode, PermissionPolicy } from "../permissions/permissions.js";
import { PodSkills } from "../skills/pod-skills.js";
import type { SystemPromptTemplate } from "../system-prompt/system-prompt-template.js";
import type { PodTelemetry, RunSource } from "../telemetry/pod-telemetry.js";
import type { PodWarning } from "../warnings.js";
import { type ApprovalAnswerGiven, ApprovalGate, type DecisionInput, ROOT_POD_PATH } from "./approvals.js";
import { PodToolChanges, registerDeferredPair } from "./deferred-tools.js";
import type { CompactionOutcome, CompactionReason, PodEvent, PodRunResult } from "./events.js";
import { recordFileChanges } from "./file-changes.js";
import { PodGuardrails } from "./guardrails.js";
import { composeInterceptor, type HookPod, hookPodOf, type PodHooks } from "./hooks.js";
import { INVOCATION_DOMAIN, invocationOf } from "./invocation.js";
import { MCP_TOOLS_DOMAIN, mcpToolsRecord, sameMcpToolsRecord } from "./mcp-tools-record.js";
import { NotificationQueue } from "./notification-queue.js";
import { type CarryOverInput, type CompactionReporting, PodCompaction } from "./pod-compaction.js";
import { PodContext } from "./pod-context.js";
import { createWorker, type PodFoundation, renderSystemPrompt, sessionLogOptions } from "./pod-foundation.js";
import { NOTIFICATION_CAPACITY, type PodOptions } from "./pod-options.js";
import { workerStateOf } from "./pod-restore.js";
import { SessionRecorder } from "./session-recorder.js";
import { runTurn, type Turn } from "./turn.js";
import { TurnState } from "./turn-state.js";
import { UsageLedger } from "./usage-ledger.js";

/** How a pod's engine starts: a template to render at the first run, or a restored head segment. */
export type PodEngineStart =
  | { readonly template: SystemPromptTemplate }
  | { readonly restored: SessionLog<Item>; readonly resumable: boolean };

/**
 * What runs a pod's turns against its session log: the head segment it writes (moved by session
 * creation and compaction), the worker, and the turn state folded from the log — each piece owned
 * by one object and changed through its methods (turns, usage, notifications, context, compaction).
 * It renders the system prompt once and creates the session right after it.
 */
export class PodEngine {
  private template: SystemPromptTemplate | null;
  /** The render in progress: concurrent callers share it, so the prompt is rendered once. */
  private rendering: Promise<string> | undefined;
  private head: SessionLog<Item> | undefined;
  /** The sandbox probe's entry is written (`recordSandboxProbe`). */
  private sandboxRecorded = false;
  /** The MCP servers' tools are recorded, or found recorded already (`recordMcpTools`). */
  private mcpToolsRecorded = false;
  /** The signal of the turn in progress (context sections load under it). */
  private turnSignal: AbortSignal | undefined;
  /** The hooks' `HookPod`, made again only when the session changes. */
  private hookIdentity: HookPod | undefined;
  readonly usage: UsageLedger;
  readonly turns: TurnState;
  readonly notifications: NotificationQueue;
  /** Extension state by domain (restored from the log; features fold their own). */
  readonly extensions: Map<string, unknown>;
  readonly recorder: SessionRecorder;
  readonly worker: Worker;
  readonly context: PodContext;
  readonly compaction: PodCompaction;
  readonly approvals: ApprovalGate;
  readonly guardrails: PodGuardrails;
  /** MCP servers' changed tool lists on their way into the log and to the model. */
  private readonly toolChanges: PodToolChanges;
  /** The pod's skills (docs/skills.md), when its manifest has `[skills]`. */
  readonly skills: PodSkills | undefined;
  /** The typed answer (docs/output.md): `[output]` or `PodOptions.output`, else a first run's `output`. */
  private typed: PodOutput | undefined;
  /** The permission mode this pod runs in (docs/permissions.md); a child's is never looser than its parent's. */
  readonly mode: PermissionMode;

  constructor(
    private readonly foundation: PodFoundation,
    private readonly options: PodOptions,
    start: PodEngineStart,
  ) {
    const log = "restored" in start ? start.restored : undefined;
    const state = log?.state;
    this.mode = effectiveMode(foundation.loaded, options.mode, options.subpod !== undefined);
    this.template = "template" in start ? start.template : null;
    this.head = log;
    this.usage = new UsageLedger(state?.usage ?? []);
    this.turns = new TurnState(state?.turn ?? 0, "resumable" in start && start.resumable);
    this.notifications = new NotificationQueue(() =>
      foundation.warn({
        code: "pod.notifications_dropped",
        message: `notification queue full (${NOTIFICATION_CAPACITY} waiting): the oldest are being dropped until the model has seen the queue`,
      }),
    );
    this.extensions = new Map(state?.extensions ?? []);
    this.recorder = new SessionRecorder(() => this.head, this.usage);
    // Tools' images and PDFs go to the session store's blobs, fitted and counted (docs/media.md).
    const media = new PodMediaStore({
      blobs: foundation.store.blobs,
      config: foundation.loaded.manifest.media,
      catalog: this.catalog,
      turn: () => this.turns.turns,
      history: () => this.worker.history,
    });
    const { onHistoryAppend, onResponseCommit } = this.recorder;
    this.worker = createWorker(
      foundation,
      options,
      { onHistoryAppend, onResponseCommit, media },
      workerStateOf(log),
    );
    this.context = new PodContext(options.contextSections ?? [], this.recorder, this.catalog, (message) =>
      foundation.warn({ code: "pod.context_section", message }),
    );
    this.compaction = new PodCompaction(foundation, options, this.worker, this.usage, this.turns);
    this.skills = PodSkills.of({
      loaded: foundation.loaded,
      catalog: this.catalog,
      store: foundation.store,
      head: () => this.head,
      append: (domain, payload) => this.appendExtension(domain, payload),
      notify: (message) => this.notifications.push(message),
      warn: (message) => foundation.warn({ code: "pod.skills", message }),
    });
    const skills = this.skills;
    if (skills !== undefined) foundation.toolServer.registerTool(() => skills.tools());
    const permissionArgs = [
      this.mode,
      foundation.loaded.manifest.permissions.rule,
      (name: string) => foundation.toolServer.isReadOnly(name),
    ] as const;
    this.approvals = new ApprovalGate({
      head: () => this.requireHead(),
      signal: () => this.turnSignal ?? new AbortController().signal,
      policy: options.autoApprove === true ? new Map() : builtinPolicyFor(foundation.loaded, this.mode),
      permissions: skills?.permissionPolicy(...permissionArgs) ?? new PermissionPolicy(...permissionArgs),
      hasTool: (name) => foundation.toolServer.names().includes(name),
      deniedReason: (record) =>
        this.catalog.render("approval_denied_reason", {
          tool: record.tool,
          by: record.answer?.by ?? "",
          reason: record.answer?.reason ?? "",
        }),
      approver: options.approver,
      defaultBy: localAnswerer,
      // A child's requests name where in the tree they come from (its approver is its root's).
      podPath: this.podPath,
      record: (decision) => this.recordDecision(decision),
      escalation: options.subpod === undefined ? "on-approval" : "never",
      approveEscalation: (callId) => foundation.toolSet.approveEscalation(callId),
    });
    this.guardrails = new PodGuardrails({
      guardrails: foundation.toolSet.guardrails,
      podPath: this.podPath,
      catalog: this.catalog,
      signal: () => this.turnSignal ?? new AbortController().signal,
      record: (decision) => this.recordDecision(decision),
      feedbackItem: (text) => this.recorder.systemMessage("notification", text),
    });
    // Deferred tools (docs/tools-deferred.md): the pair where the provider has no tool search.
    registerDeferredPair(foundation, this.catalog, this.worker.toolSearch);
    this.toolChanges = new PodToolChanges({
      catalog: this.catalog,
      append: (domain, payload) => this.appendExtension(domain, payload),
      systemItem: (text) => this.recorder.systemMessage("notification", text),
      notified: (message) => foundation.events.emit({ type: "notification", message }),
    });
    foundation.toolSet.onToolsChanged((change) => this.toolChanges.push(change));
    const declared = options.output ?? foundation.loaded.manifest.output?.schema;
    if (declared !== undefined) this.adoptOutput(declared as OutputSchemaInput, true);
    this.syncFromLog();
    if (state !== undefined) this.worker.setPromptCacheKey(state.sessionId);
  }

  /** The typed answer's owner, when the pod has one. */
  get output(): PodOutput | undefined {
    return this.typed;
  }

  /**
   * Gives the pod its output schema. It must be on the tool list from the session's first request
   * and never change (the prefix is cached): a pod has at most one, declared when it is made or
   * given to its first run; another run may pass the same schema again (its digest), never another.
   */
  adoptOutput(input: OutputSchemaInput, declared = false): PodOutput {
    const schema = toOutputSchema(input);
    if (this.typed !== undefined) {
      if (this.typed.schema.digest === schema.digest) return this.typed;
      throw new PodUsageError(
        `this run's output schema (${schema.digest}) is not the pod's (${this.typed.schema.digest}): the schema is part of the session's cached request prefix and cannot change`,
        { hint: "give every run of a pod the same output schema, or start another pod for another schema" },
      );
    }
    // Declared when the pod is made (a restored session was begun with it); given to a run, only
    // before the session's first request.
    if (this.foundation.toolServer.locked || (!declared && this.head !== undefined)) {
      throw new PodUsageError(
        "a run's output schema must be known before the session's first request: this pod has run without one",
        { hint: "declare it when the pod is made (PodOptions.output, or [output] in the manifest)" },
      );
    }
    const strategy = outputStrategy(
      this.foundation.loaded.manifest.output?.strategy ?? "tool",
      this.worker.provider,
    );
    const typed = new PodOutput({
      schema,
      maxRepairs: this.foundation.loaded.manifest.output?.max_repairs ?? 2,
      catalog: this.catalog,
      maxRequests: this.foundation.loaded.manifest.worker.max_turns,
      record: (payload) => this.appendExtension(FINAL_OUTPUT_DOMAIN, payload),
      systemItem: (text) => this.recorder.systemMessage("notification", text),
      emit: (event) => this.foundation.events.emit(event),
      strategy,
    });
    this.worker.subscribe((event) => typed.observe(event));
    if (strategy === "tool") this.foundation.toolServer.registerTool(() => typed.tool());
    // The provider's structured output: in the config, so the session's segment_start records it
    // and every request from the first sends the same schema.
    else
      this.worker.setConfig({
        ...this.worker.config,
        response_format: nativeResponseFormat(schema.jsonSchema),
      });
    this.typed = typed;
    return typed;
  }

  /** The pod's path from its root, as approvals and decisions name it. */
  get podPath(): readonly string[] {
    return this.options.subpod === undefined ? ROOT_POD_PATH : this.options.subpod.path.split(" › ");
  }

  /**
   * A decision of the mode, a rule, the scope, the sandbox, a hook or a guardrail: a `policy.decision`
   * entry in the head segment and a `policy_decision` event (the run's trace records it).
   */
  async recordDecision(decision: DecisionInput): Promise<void> {
    const payload: PolicyDecision = { ...decision, pod_path: [...this.podPath] };
    this.foundation.events.emit({ type: "policy_decision", decision: payload });
    await this.appendExtension(POLICY_DECISION_DOMAIN, payload);
  }

  get catalog(): PromptCatalog {
    return this.foundation.resources.catalog;
  }

  /** The head segment: undefined until the first run creates the session (or restored). */
  get log(): SessionLog<Item> | undefined {
    return this.head;
  }

  /** Which pod the hooks run for (they run inside runs, when the session exists). */
  hookPod(): HookPod {
    const sessionId = this.requireHead().state.sessionId;
    if (this.hookIdentity?.sessionId !== sessionId)
      this.hookIdentity = hookPodOf(this.options.subpod, sessionId);
    return this.hookIdentity;
  }

  /**
   * Composes the worker's interceptor once, at the first run: queued notifications and the context
   * block before each request, the compaction checks, then the registered hooks.
   */
  installInterceptor(hooks: readonly PodHooks[]): void {
    this.worker.setInterceptor(
      composeInterceptor(
        {
          pendingHistoryAppends: async () => [
            ...this.guardrails.takePending(),
            ...(this.typed?.pendingItems() ?? []),
            ...(await this.toolChanges.take()),
            ...this.takeNotifications(),
            ...(await this.context.take(this.contextState(this.turnSignal))),
          ],
          preRequest: async (context) => {
            // File tracking's first scan runs while the model answers the first request.
            this.foundation.toolSet.startTracking();
            await this.recordSandboxProbe();
            await this.recordMcpTools();
            return this.compaction.preRequest(context, this.head);
          },
          preToolCall: async (call, hooks) => {
            await this.recordSandboxProbe();
            const decision = await this.approvals.preToolCall(call, hooks);
            return decision.action === "continue" ? this.guardrails.beforeTool(call) : decision;
          },
          postToolCall: async (call, result, output) => {
            const denied = output.denied;
            // A tool package's claim, checked like everything read from outside.
            if (denied !== undefined && (denied.by === "scope" || denied.by === "sandbox")) {
              await this.recordDecision({
                decided_by: denied.by,
                outcome: "deny",
                call_id: call.call_id,
                tool: call.name,
                ...(typeof denied.rule === "string" ? { rule: denied.rule } : {}),
                reason: String(denied.reason),
              });
            }
            await this.skills?.afterCall(call);
            await recordFileChanges(call, output, {
              blobs: this.foundation.store.blobs,
              warn: (warning) => this.warn(warning),
              append: (domain, payload) => this.appendExtension(domain, payload),
            });
            return this.guardrails.afterTool(call, result);
          },
          afterToolBatch: async ({ requests }) =>
            (await this.typed?.afterToolBatch(requests)) ?? { action: "continue" },
          onTurnEnd: async (context) => {
            const typed = await this.typed?.onTurnEnd(context);
            if (typed !== undefined && typed.action !== "finish") return typed;
            // A typed answer given in a final_answer call never gets here: the run finished before
            // the next request; the before-tool guardrails saw that call (docs/permissions.md).
            return this.guardrails.finalAnswer(context);
          },
        },
        [...hooks],
        () => this.hookPod(),
      ),
    );
    this.context.sections.freeze();
  }

  /**
   * Materialization: flush tools, read AGENTS.md, one clock reading, render, trailing sections — once. Callers
   * that overlap share the render in progress; a failed render keeps the template, so the next
   * call fails the same way and nothing is ever sent without a prompt.
   */
  ensureSystemPromptMaterialized(): Promise<string> {
    const template = this.template;
    if (template === null) return Promise.resolve(this.worker.systemPrompt ?? "");
    const skills = this.skills;
    this.rendering ??= renderSystemPrompt(
      this.foundation,
      template,
      this.options.clock,
      skills?.render.bind(skills),
    )
      .then((rendered) => {
        this.worker.setSystemPrompt(rendered);
        this.template = null;
        return rendered;
      })
      .finally(() => {
        this.rendering = undefined;
      });
    return this.rendering;
  }

  /** Creates the session (its `segment_start` holds the rendered prompt) on the first run. */
  async ensureSessionHead(systemPrompt: string): Promise<SessionLog<Item>> {
    if (this.head === undefined) {
      const head = await SessionLog.create(
        this.foundation.store,
        {
          systemPrompt,
          config: { ...this.worker.config },
          ...(this.options.subpod === undefined ? {} : { parent: this.options.subpod.link }),
        },
        sessionLogOptions(this.foundation),
      );
      this.head ??= head;
      // How the manifest was given (`-m`, `--set`), so every door continues the session with the
      // same pod; a sub-pod's tree answers with its root's record.
      const invocation = this.options.subpod === undefined ? invocationOf(this.foundation.loaded) : undefined;
      if (invocation !== undefined && this.head === head)
        await this.appendExtension(INVOCATION_DOMAIN, invocation);
      if (this.head === head) await this.recordSandboxProbe();
      if (this.head === head) await this.skills?.recordStart();
      if (this.head === head) await this.recordMcpTools();
    }
    this.worker.setPromptCacheKey(this.head.state.sessionId);
    return this.head;
  }

  /** One turn with its signal: context sections load under it while it runs. */
  async runTurn(turn: Turn): Promise<PodRunResult> {
    this.turnSignal = turn.signal;
    try {
      return await runTurn(this, turn);
    } finally {
      this.turnSignal = undefined;
    }
  }

  contextState(signal: AbortSignal | undefined): ContextSectionState {
    return {
      workspace: this.foundation.loaded.workspace,
      sessionId: this.head?.state.sessionId,
      segmentId: this.head?.state.segmentId,
      turn: this.turns.turns,
      extensions: this.extensions,
      signal: signal ?? new AbortController().signal,
    };
  }

  /**
   * What the sandbox probe found, as a `sandbox.probe` entry, once per pod (its start in this
   * process) and only when the probe ran: right after a new session's `segment_start`, or — in a
   * restored session — before its first request or tool call, after the run's own opening entries
   * (a resume's claim on the session comes first).
   */
  private async recordSandboxProbe(): Promise<void> {
    if (this.sandboxRecorded || this.head === undefined) return;
    const probe = this.foundation.toolSet.sandboxProbe();
    if (probe === undefined) return;
    this.sandboxRecorded = true;
    await this.appendExtension(SANDBOX_PROBE_DOMAIN, probe);
  }

  /**
   * The tools the MCP servers offered, as an `mcp.tools` entry, once per pod (its start in this
   * process): right after a new session's `segment_start`, or before a restored session's first
   * request unless its log already records the same. An eval replays the calls without the servers.
   */
  private async recordMcpTools(): Promise<void> {
    if (this.mcpToolsRecorded || this.head === undefined) return;
    this.mcpToolsRecorded = true;
    const record = mcpToolsRecord(this.foundation.loaded, this.foundation.toolServer);
    if (record === undefined || sameMcpToolsRecord(this.extensions.get(MCP_TOOLS_DOMAIN), record)) return;
    await this.appendExtension(MCP_TOOLS_DOMAIN, record);
  }

  /** Appends an `extension` entry to the head segment and folds it into `extensions`. */
  async appendExtension(domain: string, payload: unknown): Promise<void> {
    // Synchronous from the caller's idle check to the queued write: no run can start in between.
    const written = this.requireHead().append({ kind: "extension", domain, payload });
    this.extensions.set(domain, payload);
    await written;
  }

  /** The `threshold` check before a turn (prelude step 4). */
  get compactionDueBeforeTurn(): boolean {
    return this.compaction.dueBeforeTurn(this.head);
  }

  /** Prelude step 4: compacts when due; best-effort, a failure is reported and the turn runs. */
  async compactBeforeTurn(signal: AbortSignal, reporting: CompactionReporting): Promise<void> {
    if (!this.compactionDueBeforeTurn || this.head === undefined) return;
    await this.compaction.compactOrWarn("threshold", this.compactionRequest(this.head, signal, reporting));
  }

  /**
   * The request path: the turn yielded before a request, so it is closed with `run_completed{yielded}`
   * in the old segment (never touched again), the history is compacted into a new segment, and the
   * turn goes on there (`invoke{resume}`). A failed compaction is reported and the turn goes on in
   * the same segment; the size check still runs before the next request, and the breaker ends retries.
   */
  async compactMidTurn(signal: AbortSignal, reporting: CompactionReporting): Promise<void> {
    const log = this.requireHead();
    await log.append({ kind: "run_completed", result: "yielded", interrupted: false });
    await this.compaction.compactOrWarn("request_threshold", this.compactionRequest(log, signal, reporting));
    await this.requireHead().append({ kind: "invoke", trigger: "resume" }, { signal });
    // Notifications delivered before were carried into the new segment; a rollback now cuts only later ones.
    this.notifications.startTurn();
  }

  /** `pod.compact()` reported to the pod's telemetry and the caller's `onEvent`. */
  compactNow(
    signal: AbortSignal,
    telemetry: PodTelemetry,
    onEvent: ((event: PodEvent) => void) | undefined,
  ): Promise<CompactionOutcome> {
    return this.compact("manual", signal, {
      emit: (event) => {
        telemetry.onJobEvent(event);
        onEvent?.(event);
      },
      workerEvent: (event) => telemetry.onCompactionWorkerEvent(event),
    });
  }

  /** `pod.compact()`: compacts now, with `[compaction]` or the manifest's defaults. */
  async compact(
    reason: CompactionReason,
    signal: AbortSignal,
    reporting: CompactionReporting,
  ): Promise<CompactionOutcome> {
    if (this.head === undefined) return { status: "skipped", reason: "no_session" };
    return this.compaction.compact(reason, this.compactionRequest(this.head, signal, reporting));
  }

  /**
   * Rolls back a turn cancelled before any model output: the log is cut to before its `invoke`
   * (`entryIndex`; nothing to cut when the turn wrote nothing), the worker, usage, context key and
   * prune boundary follow the log, and the notifications the turn delivered are queued again (they
   * are no longer in history).
   */
  async rollBack(entryIndex: number): Promise<void> {
    const log = this.requireHead();
    if (entryIndex < log.entryCount) await log.truncate(entryIndex);
    this.worker.setHistory([...log.state.history]);
    this.worker.setInterrupted(log.state.interrupted);
    this.usage.resetSegment(log.state.usage);
    this.syncFromLog();
    this.notifications.requeueDelivered();
  }

  /**
   * `pod.answerApproval` on an idle pod: the answer goes through the head log when nobody else
   * wrote since; otherwise the store is read again (and the pod continues from that read).
   */
  async answerApproval(callId: string, answer: ApprovalAnswerGiven): Promise<ApprovalRecord> {
    const head = this.head;
    if (head === undefined) {
      throw new PodUsageError("answerApproval needs the session: restore the pod of the session to answer");
    }
    const answered = await answerApproval(
      this.foundation.store as Store<Item>,
      head.sessionId,
      callId,
      answer,
      {
        ...sessionLogOptions(this.foundation),
        log: head,
      },
    );
    if (answered.log !== head) this.adoptHead(answered.log);
    return answered.approval;
  }

  /**
   * Continues from `log`, a fresh read of the head segment (another process wrote to it, e.g. an
   * approval's answer): the worker, usage, extensions and turn state follow it, as on restore.
   */
  adoptHead(log: SessionLog<Item>): void {
    this.head = log;
    this.worker.setHistory([...log.state.history]);
    this.worker.setInterrupted(log.state.interrupted);
    this.usage.resetSegment(log.state.usage);
    this.extensions.clear();
    for (const [domain, state] of log.state.extensions) this.extensions.set(domain, state);
    this.turns.restore(log.state.turn, log.state.awaitingApproval);
    this.syncFromLog();
  }

  /**
   * The calls a person must answer before the session's run, stopped awaiting approval, goes on:
   * its own and those of the children its calls delegated to, each with its session and pod path.
   */
  awaitedApprovals(): Promise<AwaitedApproval[]> {
    return approvalsAwaitedBy(this.foundation.store as Store<Item>, this.requireHead().sessionId);
  }

  /** What a run's trace reads of this engine while the run goes on. */
  runSource(): RunSource {
    return {
      session: () =>
        this.head === undefined
          ? undefined
          : { sessionId: this.head.state.sessionId, segmentId: this.head.state.segmentId },
      history: () => this.worker.history,
      systemPrompt: () => this.worker.systemPrompt,
    };
  }

  /** Reports a warning through the pod's one warning channel. */
  warn(warning: PodWarning): void {
    this.foundation.warn(warning);
  }

  /** The head segment once the session exists (the run prelude created it). */
  requireHead(): SessionLog<Item> {
    if (this.head === undefined) throw new Error("internal: the session head is created in the run prelude");
    return this.head;
  }

  /** Queued notifications as system items for the next request, each reported as a `notification` event. */
  private takeNotifications(): Item[] {
    return this.notifications.drain().map((message) => {
      this.foundation.events.emit({ type: "notification", message });
      return this.recorder.systemMessage("notification", this.catalog.render("notify_wrapper", { message }));
    });
  }

  /** The committed context key and prune boundary of the segment the pod continues in. */
  private syncFromLog(): void {
    this.context.syncFromLog(this.head);
    this.compaction.syncFromLog(this.head);
    this.skills?.syncFromLog(this.head);
  }

  private compactionRequest(log: SessionLog<Item>, signal: AbortSignal, reporting: CompactionReporting) {
    return {
      log,
      signal,
      reporting,
      contextBlock: () => this.context.current(this.contextState(signal)),
      carryOver: (input: CarryOverInput) => this.skills?.carryOver(input) ?? [],
      moveTo: async (next: SessionLog<Item>, contextKey: string | undefined) => {
        this.head = next;
        this.worker.setHistory([...next.state.history]);
        this.usage.resetSegment([]);
        this.extensions.clear();
        this.context.sections.markCommitted(contextKey ?? EMPTY_CONTEXT_KEY);
        await this.skills?.movedToCompacted();
      },
    };
  }
}

/** Providers whose structured output podkit sends (`response_format`): OpenAI (both wires) and Gemini. */
const NATIVE_OUTPUT_PROVIDERS: ReadonlySet<string> = new Set(["openai", "openai-chat", "google"]);

/**
 * The strategy a typed answer runs with: `auto` is `native` where the provider has structured
 * output podkit sends, else `tool`; `native` elsewhere is refused (docs/output.md, "Strategies").
 */
function outputStrategy(configured: "tool" | "native" | "auto", provider: string): "tool" | "native" {
  const supported = NATIVE_OUTPUT_PROVIDERS.has(provider);
  if (configured === "auto") return supported ? "native" : "tool";
  if (configured === "native" && !supported) {
    throw new PodUsageError(
      `[output] strategy = "native": the provider "${provider}" has no structured output podkit can send on every request (Anthropic's would force a tool call on each request)`,
      { hint: 'use strategy = "tool" or "auto" (which picks it here); docs/output.md, "Strategies"' },
    );
  }
  return configured;
}

function nativeResponseFormat(schema: Readonly<Record<string, unknown>>) {
  return { type: "json" as const, schema: { ...schema }, name: "answer" };
}
