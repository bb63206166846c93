import type { Item, PreToolCallDecision, ToolCallItem } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import type {
  ApprovalDecision,
  ApprovalRecord,
  EntryInput,
  PolicyDecision,
  SessionLog,
} from "@podkit/session-store";
import { escalationReason } from "@podkit/tools";
import type { PermissionPolicy, PermissionVerdict } from "../permissions/permissions.js";

/** The pod path of a call made by this pod (sub-pods will append `role#n`). */
export const ROOT_POD_PATH: readonly string[] = ["root"];

/** A tool call that waits for approval, as an approver sees it. */
export interface ApprovalRequest {
  readonly callId: string;
  readonly tool: string;
  /** The call's arguments as the model sent them (JSON text). */
  readonly arguments: string;
  /** What asked: the builtin policy (`bash`, `confirm_writes`) or a hook's `askedBy`. */
  readonly askedBy: string;
  readonly reason?: string;
  readonly podPath: readonly string[];
}

/** An answer to an approval request; `by` defaults to the local user and host. */
export interface ApprovalAnswerGiven {
  decision: ApprovalDecision;
  reason?: string;
  by?: string;
}

/**
 * Someone who can answer an approval request now (the interactive CLI asking y/n/a). Resolves
 * with the answer, or undefined when nobody can answer now: the call then stays pending in the
 * log and the run ends `awaiting_approval`. The signal aborts with the run.
 */
export type Approver = (
  request: ApprovalRequest,
  signal: AbortSignal,
) => Promise<ApprovalAnswerGiven | undefined> | ApprovalAnswerGiven | undefined;

/** What the hooks decided about a call: a worker decision, or `ask` for an approval. */
export type HookToolDecision =
  | Exclude<PreToolCallDecision, { action: "await_approval" }>
  | { action: "ask"; reason?: string; askedBy?: string };

/** The builtin policy: `bash` always asks; `write_file`/`edit_file` ask with `[tools] confirm_writes`. */
export function builtinApprovalPolicy(loaded: LoadedManifest): ReadonlyMap<string, string> {
  const policy = new Map([["bash", "bash"]]);
  if (loaded.manifest.tools.confirm_writes) {
    policy.set("write_file", "confirm_writes");
    policy.set("edit_file", "confirm_writes");
  }
  return policy;
}

/** What the gate needs of the pod: the head segment, the turn's signal, who answers, who is asked. */
export interface ApprovalGateOptions {
  head(): SessionLog<Item>;
  signal(): AbortSignal;
  /** Tool name → what asks about it (empty with `autoApprove` or in `bypass` mode). */
  policy: ReadonlyMap<string, string>;
  /** The mode and the manifest's rules, checked before everything else (docs/permissions.md). */
  permissions: PermissionPolicy;
  /** True for a tool the pod has: the policy never asks about a call that could only fail as unknown. */
  hasTool(name: string): boolean;
  /** What the model is told of a denied call (the catalog's `approval_denied_reason`). */
  deniedReason(record: ApprovalRecord): string;
  approver: Approver | undefined;
  defaultBy(): string;
  /** The pod's path from its root (`["root"]`, a child's `["root", "worker#1", …]`). */
  podPath: readonly string[];
  /** Records a decision in the log and on the event stream (`policy.decision`). */
  record(decision: DecisionInput): Promise<void>;
  /**
   * Whether a `bash` call's `escalate` (run outside the OS sandbox) can be asked for: `never` in a
   * sub-pod, whose sandbox is a loan (docs/sandbox.md, "Escalation").
   */
  escalation: "on-approval" | "never";
  /** Lets an allowed escalation run outside the sandbox (`ToolSet.approveEscalation`). */
  approveEscalation(callId: string): void;
}

/** A decision as the gate (and the other deciders) hand it to the pod: it adds the pod's path. */
export type DecisionInput = Omit<PolicyDecision, "pod_path">;

/**
 * The pod's `preToolCall`: the approval flow of docs/approvals.md. A call with an answer in the log
 * gets it (allow: it runs; deny: the model gets the reason). Otherwise the hooks, then the builtin
 * policy, decide; when one asks, `approval_requested` is committed first, then the approver (if
 * any) is asked and its answer committed as `approval_answered`; with no answer now the call
 * awaits approval and the run ends `awaiting_approval` once the whole batch was asked.
 */
export class ApprovalGate {
  /**
   * Requests nobody can answer now: committed with the run's end in one write, so a crash can
   * never leave a request without the `awaiting_approval` end that makes it resumable.
   */
  private deferred: EntryInput<Item>[] = [];

  constructor(private readonly options: ApprovalGateOptions) {}

  /** A turn starts: requests deferred by a turn that failed are dropped (its calls get closed). */
  startTurn(): void {
    this.deferred = [];
  }

  /** The deferred requests, to be written before the run's `run_completed`. */
  takeDeferred(): EntryInput<Item>[] {
    return this.deferred.splice(0);
  }

  async preToolCall(
    call: ToolCallItem,
    hooks: () => Promise<HookToolDecision>,
  ): Promise<PreToolCallDecision> {
    // The mode and the rules come first, every time: a call allowed before runs again only if
    // they still let it (authority only narrows, also across a resume).
    const verdict = this.options.permissions.decide(call);
    const about = { call_id: call.call_id, tool: call.name };
    if (verdict.action === "deny") {
      await this.options.record({ decided_by: verdict.by, outcome: "deny", ...about, ...ruleOf(verdict) });
      return { action: "deny", reason: verdict.reason };
    }
    // A command that asks to leave the sandbox always asks a person first, naming its reason —
    // whatever the mode or the rules allow — and never from a sub-pod (authority only narrows).
    const escalation = escalationReason(call.name, call.arguments);
    if (escalation !== undefined && this.options.escalation === "never") {
      const rule = "no escalation from a sub-pod's sandbox";
      const reason = `${rule}: a sub-pod runs inside the sandbox its parent lent it`;
      await this.options.record({ decided_by: "sandbox", outcome: "deny", ...about, rule, reason });
      return { action: "deny", reason };
    }
    const decided = await this.decide(call, verdict, hooks, escalation);
    if (decided.action === "continue" && escalation !== undefined)
      this.options.approveEscalation(call.call_id);
    return decided;
  }

  private async decide(
    call: ToolCallItem,
    verdict: PermissionVerdict,
    hooks: () => Promise<HookToolDecision>,
    escalation: string | undefined,
  ): Promise<PreToolCallDecision> {
    const about = { call_id: call.call_id, tool: call.name };
    let record = this.recordOf(call.call_id);
    // A call that waited on a child's approvals runs again: the tool continues that child.
    if (record?.childSessionId !== undefined) return { action: "continue" };
    if (record?.answer !== undefined) return this.decisionOf(record);
    if (record === undefined) {
      const decision = await hooks();
      // A hook's ask is recorded by its `approval_requested` entry (`asked_by` names the hook).
      if (decision.action !== "continue" && decision.action !== "ask") {
        await this.options.record({
          decided_by: "hook",
          outcome: decision.action === "abort" ? "stop" : decision.action,
          ...about,
          rule: "hook",
          ...("reason" in decision && decision.reason !== undefined ? { reason: decision.reason } : {}),
        });
      }
      if (decision.action !== "ask" && decision.action !== "continue") return decision;
      const builtin = this.options.hasTool(call.name) ? this.options.policy.get(call.name) : undefined;
      if (decision.action === "continue" && verdict.action === "ask")
        await this.options.record({ decided_by: "rule", outcome: "ask", ...about, ...ruleOf(verdict) });
      // A rule that allows what the builtin policy would ask about decided something: it is logged.
      if (decision.action === "continue" && verdict.action === "allow" && builtin !== undefined)
        await this.options.record({ decided_by: "rule", outcome: "allow", ...about, rule: verdict.rule });
      const escalating = escalation !== undefined && decision.action === "continue";
      if (escalating) {
        await this.options.record({
          decided_by: "sandbox",
          outcome: "ask",
          ...about,
          rule: "escalation",
          reason: escalation,
        });
      }
      const askedBy = escalating
        ? "sandbox"
        : decision.action === "ask"
          ? (decision.askedBy ?? "hook")
          : verdict.action === "ask"
            ? "permissions"
            : verdict.action === "allow"
              ? undefined
              : builtin;
      if (askedBy === undefined) return { action: "continue" };
      const reason = escalating
        ? `to run outside the sandbox: ${escalation}`
        : decision.action === "ask"
          ? decision.reason
          : verdict.action === "ask"
            ? verdict.reason
            : undefined;
      const request: EntryInput<Item> = {
        kind: "approval_requested",
        call_id: call.call_id,
        tool: call.name,
        arguments: call.arguments,
        pod_path: [...this.options.podPath],
        asked_by: askedBy,
        ...(reason === undefined ? {} : { reason }),
      };
      if (this.options.approver === undefined) {
        this.deferred.push(request);
        return { action: "await_approval" };
      }
      // Write-ahead: the question is in the log before anyone is asked (the answer may take hours).
      await this.options.head().append(request);
      record = this.recordOf(call.call_id) as ApprovalRecord;
    }
    return this.askNow(record);
  }

  /**
   * Call `callId` of this turn waits on the approvals of child session `childSessionId` (a
   * sub-pod's call that its foreground run stopped on): a delegated request, committed with the
   * run's end like every request nobody can answer now. It is never answered itself: the person
   * answers the child's calls, and the call closes when it gets its result after a `resume()`.
   */
  delegate(callId: string, childSessionId: string): void {
    const call = this.options
      .head()
      .state.history.findLast(
        (item): item is ToolCallItem => item.type === "tool_call" && item.call_id === callId,
      );
    if (call === undefined) throw new Error(`internal: no tool call ${callId} in the turn to delegate`);
    this.deferred.push({
      kind: "approval_requested",
      call_id: callId,
      tool: call.name,
      arguments: call.arguments,
      pod_path: [...this.options.podPath],
      asked_by: "subpod",
      child_session_id: childSessionId,
    });
  }

  /** The child session call `callId` delegated its approvals to (it is being resumed), if it did. */
  delegatedTo(callId: string): string | undefined {
    return this.recordOf(callId)?.childSessionId;
  }

  /** Asks the approver about a pending call; its answer is committed before the call goes on. */
  private async askNow(record: ApprovalRecord): Promise<PreToolCallDecision> {
    const signal = this.options.signal();
    const answer = await this.options.approver?.(requestOf(record), signal);
    if (answer === undefined) return { action: "await_approval" };
    signal.throwIfAborted();
    await this.options.head().append({
      kind: "approval_answered",
      call_id: record.callId,
      decision: answer.decision,
      ...(answer.reason === undefined ? {} : { reason: answer.reason }),
      by: answer.by ?? this.options.defaultBy(),
      in_run: true,
    });
    return this.decisionOf(this.recordOf(record.callId) as ApprovalRecord);
  }

  /** An answered call's decision: allowed calls run, denied ones tell the model who denied and why. */
  private decisionOf(record: ApprovalRecord): PreToolCallDecision {
    const answer = record.answer;
    if (answer === undefined) return { action: "await_approval" };
    if (answer.decision === "allow") return { action: "continue" };
    return { action: "deny", reason: this.options.deniedReason(record) };
  }

  private recordOf(callId: string): ApprovalRecord | undefined {
    return this.options.head().state.approvals.find((record) => record.callId === callId);
  }
}

function ruleOf(verdict: { rule: string; reason?: string }): { rule: string; reason?: string } {
  return verdict.reason === undefined
    ? { rule: verdict.rule }
    : { rule: verdict.rule, reason: verdict.reason };
}

function requestOf(record: ApprovalRecord): ApprovalRequest {
  return {
    callId: record.callId,
    tool: record.tool,
    arguments: record.arguments,
    askedBy: record.askedBy,
    ...(record.reason === undefined ? {} : { reason: record.reason }),
    podPath: record.podPath,
  };
}
