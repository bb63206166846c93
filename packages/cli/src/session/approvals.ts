import type { ApprovalAnswerGiven, ApprovalRequest, Approver } from "@podkit/pod";
import type { ApprovalRecord } from "@podkit/session-store";
import { oneLine } from "./event-printer.js";

/** A person's answer to "run this call?". */
export type Approval = "yes" | "no" | "always";

/** Asks a person one question; resolves with their answer. */
export type AskApproval = (question: string) => Promise<Approval>;

/**
 * The interactive approver of `podkit run` in a terminal: asks y/n/always for each call the pod's
 * approval policy (or a hook) holds, and hands the answer to the pod, which commits it to the log
 * before the call goes on. "always" covers that tool of that pod for the rest of the process (each
 * later call is still logged, answered at once); a child pod's question names its pod path. A denial reaches the model as the call's error result.
 */
export function interactiveApprover(options: {
  ask: AskApproval;
  /** Told about each denial (a denied call has no tool events of its own). */
  onDeny?: (call: { name: string; arguments: string }, reason: string) => void;
}): Approver {
  // "always" covers the tool for the pod it was given for: a child pod asks again.
  const always = new Set<string>();
  return async (request: ApprovalRequest): Promise<ApprovalAnswerGiven> => {
    const pod = request.podPath.join(" › ");
    const key = `${pod}\u0000${request.tool}`;
    if (always.has(key)) {
      return { decision: "allow", reason: `answered "always" for ${request.tool} earlier in this process` };
    }
    // A child pod's request names it (`root › reviewer#1 asks: …`).
    const who = request.podPath.length > 1 ? `${pod} asks: ` : "";
    const answer = await options.ask(
      `${who}Allow ${request.tool}(${approvalSubject(request.arguments)})? [y]es / [n]o / [a]lways: `,
    );
    if (answer === "always") always.add(key);
    if (answer !== "no") return { decision: "allow" };
    const reason = `the user denied this ${request.tool} call`;
    options.onDeny?.({ name: request.tool, arguments: request.arguments }, reason);
    return { decision: "deny", reason };
  };
}

/** `y`, `yes`, `n`, `no`, `a`, `always` (any case); anything else is no answer yet. */
export function parseApproval(line: string): Approval | undefined {
  const word = line.trim().toLowerCase();
  if (word === "y" || word === "yes") return "yes";
  if (word === "n" || word === "no") return "no";
  if (word === "a" || word === "always") return "always";
  return undefined;
}

/** What an approval question names: the command of a bash call, the path of a file call, else the arguments. */
export function approvalSubject(json: string): string {
  try {
    const args = JSON.parse(json) as Record<string, unknown>;
    if (typeof args.command === "string") return oneLine(args.command, 200);
    if (typeof args.path === "string") return args.path;
  } catch {
    // shown raw below
  }
  return oneLine(json, 200);
}

/** `--manifest <file>` again when the command was given one, so the printed command finds the same store. */
export function manifestArgument(manifest: string | undefined): string {
  return manifest === undefined ? "" : ` --manifest ${shellWord(manifest)}`;
}

/** The command that answers one pending call. */
export function approveCommand(sessionId: string, callId: string, manifest: string | undefined): string {
  return `podkit approve ${sessionId} ${callId} --allow${manifestArgument(manifest)}`;
}

/**
 * What `podkit run`/`resume` print when a run ends awaiting approval: each pending call and the
 * command that answers it, then the command that continues the run.
 */
export function pendingApprovalsText(
  sessionId: string,
  pending: readonly ApprovalRecord[],
  manifest: string | undefined,
): string {
  const lines = [`the run is awaiting approval of ${pending.length} tool call(s) in session ${sessionId}:`];
  for (const approval of pending) {
    // A sub-pod's call names where in the tree it was made; it is answered from here all the same.
    const where = approval.podPath.length > 1 ? `${approval.podPath.join(" › ")}: ` : "";
    lines.push(`  ${approval.callId}  ${where}${approval.tool}(${approvalSubject(approval.arguments)})`);
    lines.push(
      `    answer: ${approveCommand(sessionId, approval.callId, manifest)}   (or --deny --reason "…")`,
    );
  }
  lines.push(`then continue with: podkit resume ${sessionId}${manifestArgument(manifest)}`);
  return `${lines.join("\n")}\n`;
}

/** A word a POSIX shell reads back unchanged. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
