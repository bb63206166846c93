/**
 * The `bash` argument that asks to run one command outside the sandbox (docs/sandbox.md,
 * "Escalation"): `escalate: { reason }`. Offered only while the sandbox is active.
 */
export const ESCALATE_ARGUMENT = "escalate";

/**
 * The reason a tool call gives for running its command outside the sandbox, when it asks to: a
 * `bash` call whose arguments (an object, or the JSON text of a tool call item) carry
 * `escalate: { reason }` with a non-empty reason. What the pod's approval gate asks a person about
 * before it calls `ToolSet.approveEscalation(callId)`; undefined for every other call.
 */
export function escalationReason(toolName: string, args: unknown): string | undefined {
  if (toolName !== "bash") return undefined;
  let parsed = args;
  if (typeof args === "string") {
    try {
      parsed = JSON.parse(args);
    } catch {
      return undefined;
    }
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const escalate = (parsed as Record<string, unknown>)[ESCALATE_ARGUMENT];
  if (typeof escalate !== "object" || escalate === null) return undefined;
  const reason = (escalate as Record<string, unknown>).reason;
  return typeof reason === "string" && reason !== "" ? reason : undefined;
}
