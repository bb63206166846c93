import type { Context } from "@opentelemetry/api";
import type { Item, ToolOutput } from "@podkit/llm-worker";
import type { Scope } from "@podkit/manifest";
import type { ParentLink, Store } from "@podkit/session-store";
import type { TreeBudget } from "../budget/tree-budget.js";
import type { PodEvent, PodRunResult } from "../pod/events.js";
import { hookPodOf } from "../pod/hooks.js";
import type { Pod } from "../pod/pod.js";
import type { PodOptions } from "../pod/pod-options.js";
import type { WarningSink } from "../warnings.js";
import { type ChildPodInfo, childSessionsOf, storedChildInfo } from "./children.js";
import { childPath, ROOT_POD_PATH, type SubpodPlacement } from "./placement.js";
import type { SubpodRole } from "./roles.js";
import { lendScope } from "./scope-loan.js";
import { refusal, type SubpodToolTarget } from "./subpod-tools.js";

/** What a host needs of its pod (the parent). */
export interface SubpodParent {
  /** The parent's session id (it exists while a run calls a tool). */
  sessionId(): string | undefined;
  readonly store: Store<Item>;
  readonly scope: Scope;
  readonly workspace: string;
  /** The parent's options: the children get its model, environment, clock and store. */
  readonly options: PodOptions;
  /** Into the parent's event stream (its run's handle and its subscribers). */
  emit(event: PodEvent): void;
  /** The parent's notification path: committed before its model sees it. */
  notify(message: string): void;
  warn: WarningSink;
  /** The tree's budget, handed to every child. */
  readonly budget: TreeBudget | undefined;
  /** The trace context of the parent's tool call `callId` in its running trace (its `execute_tool` span). */
  toolTraceContext(callId: string): Context | undefined;
  /** Builds or restores a child pod (`Pod.fromManifest` / `Pod.restore`; passed in to keep the import one-way). */
  open(role: SubpodRole, options: PodOptions, sessionId?: string): Promise<Pod>;
}

/** One child this parent knows in memory. */
interface ChildSlot {
  readonly sessionId: string;
  readonly role: SubpodRole;
  readonly link: ParentLink;
  readonly path: string;
  pod: Pod | undefined;
  status: ChildPodInfo["status"];
  /** Aborts a background run (`stop_pod`, the parent's close). */
  abort: AbortController | undefined;
  unsubscribe: (() => void) | undefined;
  /** Where the child's next run is traced: under the parent's tool call that runs it. */
  readonly trace: { parent: Context | undefined };
}

/**
 * The children of one pod: it spawns, messages, stops and lists them for the four tools, checks
 * every request against the roles, the caps and the parent's scope, forwards the children's
 * events tagged with their pod path, and closes them with the parent. Refusals are error results
 * that name what is allowed.
 */
export class SubpodHost implements SubpodToolTarget {
  private readonly slots = new Map<string, ChildSlot>();
  private readonly spawned = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly parent: SubpodParent,
    private readonly roles: ReadonlyMap<string, SubpodRole>,
  ) {}

  /** This pod's path and depth (the root is at depth 0). */
  private get place(): { path: string; depth: number } {
    const placement = this.parent.options.subpod;
    return placement === undefined
      ? { path: ROOT_POD_PATH, depth: 0 }
      : { path: placement.path, depth: placement.link.depth };
  }

  async spawn(
    roleName: string,
    task: string,
    background: boolean,
    ctx: { callId: string; signal: AbortSignal },
  ): Promise<ToolOutput> {
    const role = this.roles.get(roleName);
    if (role === undefined)
      return refusal(`unknown role "${roleName}"; roles you may spawn: ${this.roleNames()}`);
    const depth = this.place.depth + 1;
    if (depth > role.config.max_depth) {
      return refusal(
        `role "${roleName}" may run at depth ${role.config.max_depth} at most (max_depth); a child of this pod would be at depth ${depth}. Do the work here, or ask your parent`,
      );
    }
    const capped = this.concurrencyRefusal(role);
    if (capped !== undefined) return capped;
    const loan = await lendScope(this.parent.scope, role.asked, this.parent.workspace);
    if (!loan.ok) return refusal(`role "${roleName}" cannot be lent its scope: ${loan.rule}: ${loan.reason}`);
    const parentSession = this.parent.sessionId();
    if (parentSession === undefined)
      return refusal("spawn_pod runs inside a turn of a pod that has its session");
    const n = (this.spawned.get(roleName) ?? 0) + 1;
    this.spawned.set(roleName, n);
    const link: ParentLink = { session_id: parentSession, call_id: ctx.callId, role: roleName, depth };
    const slot = await this.open(role, link, childPath(this.place.path, roleName, n));
    if (background) {
      const abort = new AbortController();
      slot.abort = abort;
      void this.runChild(slot, task, { callId: ctx.callId, signal: abort.signal }).then((output) => {
        if (!this.closed)
          this.parent.notify(`child pod ${slot.path} (id ${slot.sessionId}) finished:\n${output.summary}`);
      });
      return { summary: JSON.stringify({ id: slot.sessionId, role: roleName, status: "running" }) };
    }
    return this.runChild(slot, task, ctx);
  }

  async send(id: string, message: string, ctx: { callId: string; signal: AbortSignal }): Promise<ToolOutput> {
    let slot = this.slots.get(id);
    if (slot === undefined) {
      const stored = (await this.storedChildren()).find((child) => child.sessionId === id);
      if (stored === undefined)
        return refusal(`"${id}" is not a child of this pod; your children: ${await this.childIds()}`);
      const role = this.roles.get(stored.link.role);
      if (role === undefined)
        return refusal(`child ${id} has role "${stored.link.role}", which this pod no longer declares`);
      slot = await this.open(role, stored.link, this.storedPath(stored.link.role, id), id);
    }
    if (slot.status === "running")
      return refusal(`child ${id} is running; wait for it (list_pods) or stop_pod it`);
    const capped = this.concurrencyRefusal(slot.role);
    if (capped !== undefined) return capped;
    if (slot.pod === undefined) {
      const reopened = await this.open(slot.role, slot.link, slot.path, id);
      slot = reopened;
    }
    const waiting = slot.pod?.awaitingApproval === true ? slot.pod : undefined;
    if (waiting === undefined) return this.runChild(slot, message, ctx);
    // The child's run stopped on approvals: it goes on where it stopped (allowed calls run once),
    // with the message as a notification — a new input would close those calls unrun.
    const pending = waiting.pendingApprovals;
    if (pending.length > 0 && this.parent.options.approver === undefined) {
      const calls = pending.map((a) => `${a.tool} [${a.callId}]`).join(", ");
      return refusal(
        `child ${slot.path} (id ${id}) awaits approval of ${calls}: the person answers with podkit approve ${id} <call> --allow (or --deny); then send_pod again`,
      );
    }
    waiting.notify(message);
    return this.runChild(slot, undefined, ctx);
  }

  async stop(id: string): Promise<ToolOutput> {
    const slot = this.slots.get(id);
    if (slot === undefined)
      return refusal(`"${id}" is not a running child of this pod; your children: ${await this.childIds()}`);
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
    const options = { ...childOptions(this.parent.options, placement), store: this.parent.store };
    const pod = await this.parent.open(role, options, sessionId);
    const id = sessionId ?? (await pod.startSession());
    const hooks = this.parent.options.childHooks?.(hookPodOf(placement, id));
    if (hooks !== undefined) pod.addHooks(hooks);
    const slot: ChildSlot = {
      sessionId: id,
      role,
      link,
      path,
      pod,
      status: "idle",
      abort: undefined,
      trace,
      // A grandchild's event already carries its full path: passed on as it is.
      unsubscribe: pod.subscribe((event) =>
        this.parent.emit(event.type === "subpod" ? event : { type: "subpod", path, sessionId: id, event }),
      ),
    };
    this.slots.set(id, slot);
    return slot;
  }

  /** Runs `input` in the child, or (undefined) resumes its run that stopped on approvals. */
  private async runChild(
    slot: ChildSlot,
    input: string | undefined,
    { callId, signal }: { callId: string; signal: AbortSignal },
  ): Promise<ToolOutput> {
    const pod = slot.pod;
    if (pod === undefined) return refusal(`child ${slot.sessionId} is stopped`);
    slot.status = "running";
    // The child's run is traced under the parent's tool call that runs it.
    slot.trace.parent = this.parent.toolTraceContext(callId);
    try {
      const run = input === undefined ? pod.resume({ signal }) : pod.run(input, { signal });
      const result = await run.result;
      slot.status = slot.status === "running" ? "idle" : slot.status;
      return { summary: JSON.stringify(answerOf(slot, result)) };
    } catch (error) {
      if (slot.status === "running") slot.status = "failed";
      const message = error instanceof Error ? error.message : String(error);
      return refusal(`child ${slot.path} (id ${slot.sessionId}) ended without an answer: ${message}`);
    }
  }

  private async release(slot: ChildSlot): Promise<void> {
    slot.abort?.abort(new Error("stopped by the parent"));
    slot.unsubscribe?.();
    const pod = slot.pod;
    slot.pod = undefined;
    slot.status = "stopped";
    await pod?.close();
  }

  private concurrencyRefusal(role: SubpodRole): ToolOutput | undefined {
    const running = [...this.slots.values()].filter(
      (s) => s.role.name === role.name && s.status === "running",
    );
    if (running.length < role.config.max_concurrent) return undefined;
    return refusal(
      `role "${role.name}" already has ${running.length} children running (max_concurrent ${role.config.max_concurrent}): ${running.map((s) => s.sessionId).join(", ")}; wait for one (send_pod answers when it is idle) or stop_pod one`,
    );
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

  private roleNames(): string {
    return [...this.roles.keys()].join(", ") || "none";
  }

  private async childIds(): Promise<string> {
    const ids = (await this.storedChildren()).map((child) => `${child.sessionId} (${child.link.role})`);
    return ids.join(", ") || "none yet";
  }
}

/**
 * A child's options: the parent's model, environment, clock, store, render limits, telemetry,
 * optional packages and approver (so a child's approval reaches the person who answers the
 * root's, naming the child's pod path), the application's `childHooks`, and its placement; memory
 * is not attached. Not the parent's own hooks, tool packages given in code, `autoRun` or
 * `autoApprove`: nothing that approves or allows is inherited silently.
 */
export function childOptions(parent: PodOptions, placement: SubpodPlacement): PodOptions {
  const {
    model,
    env,
    clock,
    store,
    renderLimits,
    telemetry,
    onWarning,
    signal,
    approver,
    childHooks,
    packages,
  } = parent;
  return {
    // The tree remembers through its root (whose history holds every child's answer): a child
    // never attaches the manifest's [memory] it inherits, so it runs no extraction of its own.
    attachMemory: false,
    ...(packages === undefined ? {} : { packages }),
    // Hooks the application gives for children (on purpose) reach every depth.
    ...(childHooks === undefined ? {} : { childHooks }),
    // The person who answers the root's approvals answers the children's: each request carries the
    // child's pod path. `autoApprove` is never passed on.
    ...(approver === undefined ? {} : { approver }),
    ...(model === undefined ? {} : { model }),
    ...(env === undefined ? {} : { env }),
    ...(clock === undefined ? {} : { clock }),
    ...(store === undefined ? {} : { store }),
    ...(renderLimits === undefined ? {} : { renderLimits }),
    ...(telemetry === undefined ? {} : { telemetry }),
    ...(onWarning === undefined ? {} : { onWarning }),
    ...(signal === undefined ? {} : { signal }),
    subpod: placement,
  };
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
  };
}

/** The tool result of a child's run: its answer, id and usage, and the stop reason when it has no answer. */
function answerOf(slot: ChildSlot, result: PodRunResult) {
  const answered = result.status === "finished" && result.text !== "";
  return {
    id: slot.sessionId,
    role: slot.role.name,
    ...(answered ? { answer: result.text } : { answer: null, stop_reason: stopReasonOf(result) }),
    usage: {
      requests: result.usage.length,
      input_tokens: result.usage.reduce((sum, u) => sum + u.inputTokens, 0),
      output_tokens: result.usage.reduce((sum, u) => sum + u.outputTokens, 0),
    },
  };
}

/**
 * Why a child ended without an answer: a cap (`budget_exhausted`), the run's status when it
 * stopped early (`awaiting_approval`, `paused`, `yielded`), else the model's own stop reason.
 */
function stopReasonOf(result: PodRunResult): string {
  if (result.stopReason?.kind === "budget_exhausted") return "budget_exhausted";
  if (result.status !== "finished") return result.status;
  return result.stopReason?.kind ?? result.status;
}
