import type { Context } from "@opentelemetry/api";
import type { Item, Tool, ToolOutput } from "@podkit/llm-worker";
import type { Scope } from "@podkit/manifest";
import type { ParentLink, Store } from "@podkit/session-store";
import type { TreeBudget } from "../budget/tree-budget.js";
import type { PodPrompt, PodPromptContextArgs } from "../catalog/pod-prompt.js";
import type { OutputIssue } from "../output/output-schema.js";
import type { WarningSink } from "../warnings.js";
import { type ChildPodInfo, childSessionsOf, storedChildInfo, storedChildOutput } from "./children.js";
import { childPath, ROOT_POD_PATH, type SubpodPlacement } from "./placement.js";
import type { SubpodRole } from "./roles.js";
import { lendScope } from "./scope-loan.js";
import { type SubpodToolTarget, subpodTools } from "./subpod-tools.js";

/** How a child's run ended, as far as its parent's tools need it. */
export interface ChildRunResult {
  readonly status: string;
  readonly text: string;
  readonly stopReason?: { readonly kind: string } | undefined;
  /** The typed answer, when the child has an output schema and its run finished with one. */
  readonly output?: unknown;
  readonly usage: readonly { readonly inputTokens: number; readonly outputTokens: number }[];
}

/** What a parent drives of a child pod (a `Pod`; the interface keeps `subpods/` below `pod/`). */
export interface ChildPod {
  readonly turn: number;
  readonly usage: readonly { readonly inputTokens: number; readonly outputTokens: number }[];
  /** The child's last run ended `awaiting_approval` and no run started since. */
  readonly awaitingApproval: boolean;
  run(input: string, options: { signal?: AbortSignal }): { readonly result: Promise<ChildRunResult> };
  resume(options: { signal?: AbortSignal }): { readonly result: Promise<ChildRunResult> };
  notify(message: string): void;
  startSession(): Promise<string>;
  close(): Promise<void>;
}

/** What a host needs of its pod (the parent). */
export interface SubpodParent {
  /** The parent's session id (it exists while a run calls a tool). */
  sessionId(): string | undefined;
  readonly store: Store<Item>;
  readonly scope: Scope;
  readonly workspace: string;
  /** Where the parent itself sits (undefined: it is a root). */
  readonly placement: SubpodPlacement | undefined;
  /** The tree's budget, handed to every child. */
  readonly budget: TreeBudget | undefined;
  /** A model-facing text of the parent's catalog (tool descriptions, refusals, notifications). */
  text<K extends PodPrompt>(key: K, ...context: PodPromptContextArgs<K>): string;
  /** The parent's notification path: committed before its model sees it. */
  notify(message: string): void;
  warn: WarningSink;
  /** The trace context of the parent's tool call `callId` in its running trace (its `execute_tool` span). */
  toolTraceContext(callId: string): Context | undefined;
  /**
   * Builds (`sessionId` undefined) or restores a child pod for `role` at `placement`, with the
   * parent's child options, the application's child hooks and its events forwarded into the
   * parent's stream (`Pod.fromManifest` / `Pod.restore`, passed in to keep the import one-way).
   */
  open(role: SubpodRole, placement: SubpodPlacement, sessionId?: string): Promise<ChildPod>;
  /**
   * The parent's call `callId` waits on the approvals of child `childSessionId`: recorded (as a
   * delegated approval) with the end of the parent's run, which then ends `awaiting_approval`.
   */
  delegate(callId: string, childSessionId: string): void;
  /** The child a call of the parent delegated its approvals to (a call resumed after the answers), if any. */
  delegatedTo(callId: string): string | undefined;
}

/** One child this parent knows in memory. */
interface ChildSlot {
  readonly sessionId: string;
  readonly role: SubpodRole;
  readonly link: ParentLink;
  readonly path: string;
  pod: ChildPod | undefined;
  status: ChildPodInfo["status"];
  /** The child's latest typed answer (its role has an output schema). */
  output: { value: unknown } | undefined;
  /** Aborts a background run (`stop_pod`, the parent's close). */
  abort: AbortController | undefined;
  /** Where the child's next run is traced: under the parent's tool call that runs it. */
  readonly trace: { parent: Context | undefined };
}

/** A tool call's context. */
interface CallContext {
  readonly callId: string;
  readonly signal: AbortSignal;
}

/**
 * The children of one pod: it spawns, messages, stops and lists them for the four tools, checks
 * every request against the roles, the caps and the parent's scope, and closes them with the
 * parent. Refusals are error results that name what is allowed, worded by the catalog. A
 * foreground child that stops on approvals nobody can answer now suspends the parent's call
 * (`awaiting_approval`), so the person is asked through the root; resumed, the same call
 * continues the same child — never a second one.
 */
export class SubpodHost implements SubpodToolTarget {
  private readonly slots = new Map<string, ChildSlot>();
  private readonly spawned = new Map<string, number>();
  /**
   * Children being started or continued, by role (and the child ids claimed), counted with the
   * running ones from the synchronous check on: the calls of one response all run at once, and
   * a check before an `await` whose slot exists only after it lets them all through.
   */
  private readonly starting = new Map<string, number>();
  private readonly claimed = new Set<string>();
  private closed = false;

  constructor(
    private readonly parent: SubpodParent,
    private readonly roles: ReadonlyMap<string, SubpodRole>,
  ) {}

  /** This pod's path and depth (the root is at depth 0). */
  private get place(): { path: string; depth: number } {
    const placement = this.parent.placement;
    return placement === undefined
      ? { path: ROOT_POD_PATH, depth: 0 }
      : { path: placement.path, depth: placement.link.depth };
  }

  async spawn(roleName: string, task: string, background: boolean, ctx: CallContext): Promise<ToolOutput> {
    const earlier = this.parent.delegatedTo(ctx.callId);
    if (earlier !== undefined) return this.continueDelegated(earlier, ctx);
    const role = this.roles.get(roleName);
    if (role === undefined)
      return this.refuse("subpod_refused_unknown_role", { role: roleName, roles: [...this.roles.keys()] });
    const depth = this.place.depth + 1;
    if (depth > role.config.max_depth) {
      return this.refuse("subpod_refused_max_depth", {
        role: roleName,
        max_depth: role.config.max_depth,
        depth,
      });
    }
    const reservation = this.reserve(role);
    if ("refused" in reservation) return reservation.refused;
    try {
      const loan = await lendScope(this.parent.scope, role.asked, this.parent.workspace);
      if (!loan.ok)
        return this.refuse("subpod_refused_scope", { role: roleName, rule: loan.rule, reason: loan.reason });
      const parentSession = this.parent.sessionId();
      if (parentSession === undefined) return this.refuse("subpod_refused_no_session");
      const n = (this.spawned.get(roleName) ?? 0) + 1;
      this.spawned.set(roleName, n);
      const link: ParentLink = { session_id: parentSession, call_id: ctx.callId, role: roleName, depth };
      const slot = await this.open(role, link, childPath(this.place.path, roleName, n));
      if (!background) return await this.runChild(slot, task, ctx, reservation.release);
      const abort = new AbortController();
      slot.abort = abort;
      void this.runChild(slot, task, { callId: ctx.callId, signal: abort.signal }, reservation.release, {
        background: true,
      }).then((output) => {
        if (!this.closed) {
          this.parent.notify(
            this.parent.text("subpod_child_finished", {
              path: slot.path,
              id: slot.sessionId,
              summary: output.summary,
            }),
          );
        }
      });
      return { summary: JSON.stringify({ id: slot.sessionId, role: roleName, status: "running" }) };
    } finally {
      reservation.release();
    }
  }

  async send(id: string, message: string, ctx: CallContext): Promise<ToolOutput> {
    const earlier = this.parent.delegatedTo(ctx.callId);
    if (earlier !== undefined) return this.continueDelegated(earlier, ctx);
    if (this.claimed.has(id) || this.slots.get(id)?.status === "running")
      return this.refuse("subpod_refused_running", { id });
    let slot = this.slots.get(id);
    let role = slot?.role;
    let stored: { sessionId: string; link: ParentLink } | undefined;
    if (slot === undefined) {
      stored = (await this.storedChildren()).find((child) => child.sessionId === id);
      if (stored === undefined)
        return this.refuse("subpod_refused_not_a_child", { id, children: await this.childIds() });
      role = this.roles.get(stored.link.role);
      if (role === undefined) return this.refuse("subpod_refused_role_gone", { id, role: stored.link.role });
    }
    const reservation = this.reserve(role as SubpodRole, id);
    if ("refused" in reservation) return reservation.refused;
    try {
      // A child stopped on approvals was answered from outside (another process, the CLI, HTTP):
      // the pod held here has not seen the answers, so it is opened again from the log.
      if (slot === undefined || slot.pod === undefined || slot.pod.awaitingApproval) {
        const link = (slot?.link ?? stored?.link) as ParentLink;
        if (slot?.pod !== undefined) await this.release(slot);
        slot = await this.open(role as SubpodRole, link, slot?.path ?? this.storedPath(link.role, id), id);
      }
      const pod = slot.pod as ChildPod;
      // The child's run stopped on approvals: it goes on where it stopped (allowed calls run once),
      // with the message as a notification — a new input would close those calls unrun.
      if (!pod.awaitingApproval) return await this.runChild(slot, message, ctx, reservation.release);
      pod.notify(message);
      return await this.runChild(slot, undefined, ctx, reservation.release);
    } finally {
      reservation.release();
    }
  }

  async stop(id: string): Promise<ToolOutput> {
    const slot = this.slots.get(id);
    if (slot === undefined)
      return this.refuse("subpod_refused_not_a_child", { id, children: await this.childIds() });
    await this.release(slot);
    return { summary: JSON.stringify({ id, status: "stopped" }) };
  }

  async list(): Promise<ToolOutput> {
    return { summary: JSON.stringify(await this.children()) };
  }

  /** Every child of this pod: those in memory and those only in the log (a restored parent's). */
  async children(): Promise<ChildPodInfo[]> {
    const infos: ChildPodInfo[] = [];
    for (const child of await this.storedChildren()) {
      const slot = this.slots.get(child.sessionId);
      infos.push(slot === undefined ? await this.storedInfo(child) : slotInfo(slot));
    }
    return infos;
  }

  /** Stops every child (the parent is closing): runs aborted, pods closed, logs kept. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.slots.values()].map((slot) => this.release(slot)));
  }

  /**
   * A call of the parent resumed after the approvals it waited on were answered: the child it
   * delegated them to goes on where it stopped (`resume()`), in the foreground of the same call.
   */
  private async continueDelegated(id: string, ctx: CallContext): Promise<ToolOutput> {
    let slot = this.slots.get(id);
    if (slot?.status === "running" || this.claimed.has(id))
      return this.refuse("subpod_refused_running", { id });
    let role = slot?.role;
    let link = slot?.link;
    if (slot === undefined) {
      const stored = (await this.storedChildren()).find((child) => child.sessionId === id);
      if (stored === undefined)
        return this.refuse("subpod_refused_not_a_child", { id, children: await this.childIds() });
      role = this.roles.get(stored.link.role);
      link = stored.link;
      if (role === undefined) return this.refuse("subpod_refused_role_gone", { id, role: stored.link.role });
    }
    const reservation = this.reserve(role as SubpodRole, id);
    if ("refused" in reservation) return reservation.refused;
    try {
      // The answers the child waited on were written from outside: it is always opened again
      // from the log (a pod held here since the spawn has not seen them).
      if (slot?.pod !== undefined) await this.release(slot);
      const path = slot?.path ?? this.storedPath((link as ParentLink).role, id);
      slot = await this.open(role as SubpodRole, link as ParentLink, path, id);
      return await this.runChild(slot, undefined, ctx, reservation.release);
    } finally {
      reservation.release();
    }
  }

  private async open(
    role: SubpodRole,
    link: ParentLink,
    path: string,
    sessionId?: string,
  ): Promise<ChildSlot> {
    const budget = this.parent.budget;
    const trace: { parent: Context | undefined } = { parent: undefined };
    const placement: SubpodPlacement = {
      link,
      path,
      ...(budget === undefined ? {} : { budget }),
      traceParent: () => trace.parent,
    };
    const pod = await this.parent.open(role, placement, sessionId);
    const id = sessionId ?? (await pod.startSession());
    // A child continued from its log keeps showing the answer it gave before (`list_pods`).
    const output =
      sessionId === undefined || role.output === undefined
        ? undefined
        : await storedChildOutput(this.parent.store, sessionId);
    const slot: ChildSlot = {
      sessionId: id,
      role,
      link,
      path,
      pod,
      status: "idle",
      output,
      abort: undefined,
      trace,
    };
    this.slots.set(id, slot);
    return slot;
  }

  /**
   * Runs `input` in the child, or (undefined) resumes its run that stopped on approvals. The slot
   * counts as running from here, so `started` gives back the reservation that counted it until now.
   * In the foreground a child that ends `awaiting_approval` suspends the parent's call.
   */
  private async runChild(
    slot: ChildSlot,
    input: string | undefined,
    { callId, signal }: CallContext,
    started: () => void,
    options: { background?: boolean } = {},
  ): Promise<ToolOutput> {
    const pod = slot.pod;
    if (pod === undefined) return this.refuse("subpod_refused_stopped", { id: slot.sessionId });
    slot.status = "running";
    started();
    // The child's run is traced under the parent's tool call that runs it.
    slot.trace.parent = this.parent.toolTraceContext(callId);
    try {
      const run = input === undefined ? pod.resume({ signal }) : pod.run(input, { signal });
      const result = await run.result;
      if (slot.status === "running")
        slot.status = result.status === "awaiting_approval" ? "awaiting_approval" : "idle";
      const typed = this.typedAnswer(slot, result);
      if ("refused" in typed) return typed.refused;
      if (typed.output !== undefined) slot.output = typed.output;
      const answer = JSON.stringify(answerOf(slot, result, typed.output));
      if (result.status === "awaiting_approval" && options.background !== true) {
        this.parent.delegate(callId, slot.sessionId);
        return { summary: answer, awaiting_approval: true };
      }
      return { summary: answer };
    } catch (error) {
      if (slot.status === "running") slot.status = "failed";
      const message = error instanceof Error ? error.message : String(error);
      return this.refuse("subpod_child_no_answer", { path: slot.path, id: slot.sessionId, error: message });
    }
  }

  /**
   * The typed answer of a child whose role declares an output schema, checked once more against
   * the role's schema before the parent sees it (the child's run checked it against its own; this
   * holds whatever the child was built with). A child that finished without one, or with one that
   * does not match, gets the parent an error result naming the violations.
   */
  private typedAnswer(
    slot: ChildSlot,
    result: ChildRunResult,
  ): { output?: { value: unknown } } | { refused: ToolOutput } {
    const schema = slot.role.output;
    if (schema === undefined || result.status !== "finished") return {};
    const where = { path: slot.path, id: slot.sessionId };
    if (result.output === undefined) {
      return {
        refused: this.refuse("subpod_child_no_answer", {
          ...where,
          error: `it finished without the typed answer role "${slot.role.name}" declares (its output schema)`,
        }),
      };
    }
    const checked = schema.validate(result.output);
    if (checked.ok) return { output: { value: checked.value } };
    return {
      refused: this.refuse("subpod_child_no_answer", {
        ...where,
        error: `its answer does not match role "${slot.role.name}"'s output schema: ${issuesText(checked.issues)}`,
      }),
    };
  }

  private async release(slot: ChildSlot): Promise<void> {
    slot.abort?.abort(new Error("stopped by the parent"));
    const pod = slot.pod;
    slot.pod = undefined;
    slot.status = "stopped";
    await pod?.close();
  }

  /**
   * Counts one more child of `role` starting (and claims child `id`), or refuses when the role's
   * `max_concurrent` is reached. Synchronous from the check to the count; `release` is idempotent.
   */
  private reserve(role: SubpodRole, id?: string): { release: () => void } | { refused: ToolOutput } {
    const running = [...this.slots.values()].filter(
      (s) => s.role.name === role.name && s.status === "running",
    );
    const starting = this.starting.get(role.name) ?? 0;
    if (running.length + starting >= role.config.max_concurrent) {
      return {
        refused: this.refuse("subpod_refused_max_concurrent", {
          role: role.name,
          max_concurrent: role.config.max_concurrent,
          running: running.map((s) => s.sessionId),
        }),
      };
    }
    this.starting.set(role.name, starting + 1);
    if (id !== undefined) this.claimed.add(id);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.starting.set(role.name, (this.starting.get(role.name) ?? 1) - 1);
        if (id !== undefined) this.claimed.delete(id);
      },
    };
  }

  /** An error result the model can act on, worded by the catalog. */
  private refuse<K extends PodPrompt>(key: K, ...context: PodPromptContextArgs<K>): ToolOutput {
    return { summary: this.parent.text(key, ...context), is_error: true };
  }

  private async storedChildren() {
    const session = this.parent.sessionId();
    return session === undefined ? [] : childSessionsOf(this.parent.store, session);
  }

  private storedInfo(child: { sessionId: string; link: ParentLink }): Promise<ChildPodInfo> {
    return storedChildInfo(this.parent.store, child, this.storedPath(child.link.role, child.sessionId));
  }

  /** A child known only from the log is shown by its id, as its spawn number is not recorded. */
  private storedPath(role: string, id: string): string {
    return `${this.place.path} › ${role}@${id.slice(-8)}`;
  }

  private async childIds(): Promise<string[]> {
    return (await this.storedChildren()).map((child) => `${child.sessionId} (${child.link.role})`);
  }
}

function slotInfo(slot: ChildSlot): ChildPodInfo {
  const usage = slot.pod?.usage ?? [];
  return {
    sessionId: slot.sessionId,
    role: slot.role.name,
    depth: slot.link.depth,
    callId: slot.link.call_id,
    status: slot.status,
    path: slot.path,
    turns: slot.pod?.turn ?? 0,
    usage: {
      inputTokens: usage.reduce((sum, u) => sum + u.inputTokens, 0),
      outputTokens: usage.reduce((sum, u) => sum + u.outputTokens, 0),
    },
    ...(slot.output === undefined ? {} : { output: slot.output.value }),
  };
}

/**
 * The tool result of a child's run: its answer (the typed answer's object, for a role with an
 * output schema; else its text), id and usage, and the stop reason when it has no answer.
 */
function answerOf(slot: ChildSlot, result: ChildRunResult, output: { value: unknown } | undefined) {
  const text = result.status === "finished" && result.text !== "" ? { answer: result.text } : undefined;
  const answered = output === undefined ? text : { answer: output.value };
  return {
    id: slot.sessionId,
    role: slot.role.name,
    ...(answered ?? { answer: null, stop_reason: stopReasonOf(result) }),
    usage: {
      requests: result.usage.length,
      input_tokens: result.usage.reduce((sum, u) => sum + u.inputTokens, 0),
      output_tokens: result.usage.reduce((sum, u) => sum + u.outputTokens, 0),
    },
  };
}

/** Violations as the model reads them: `/verdict: must be equal to one of the allowed values; …`. */
function issuesText(issues: readonly OutputIssue[]): string {
  return issues.map((issue) => `${issue.path || "(root)"}: ${issue.message}`).join("; ");
}

/** Why a child ended without an answer: the run's status when it stopped early, else the model's own stop reason. */
function stopReasonOf(result: ChildRunResult): string {
  if (result.status !== "finished") return result.status;
  return result.stopReason?.kind ?? result.status;
}

/**
 * The sub-pod wiring of a pod whose manifest declares roles: its host, and the four tools its
 * model gets (registered through `register`; none at a depth where no role may run one deeper).
 */
export function hostSubpods(
  parent: SubpodParent,
  roles: ReadonlyMap<string, SubpodRole>,
  register: (tool: Tool) => void,
): SubpodHost {
  const host = new SubpodHost(parent, roles);
  const depth = parent.placement?.link.depth ?? 0;
  for (const tool of subpodTools(roles, host, depth, parent.text)) register(tool);
  return host;
}
