import type { ToolCallItem } from "@podkit/llm-worker";

/** The name of the tool that searches the deferred tools (docs/tools-deferred.md). */
export const FIND_TOOLS = "find_tools";
/** The name of the tool that calls a deferred tool by name. */
export const CALL_TOOL = "call_tool";

/**
 * The call a `call_tool` call makes: the deferred tool's name with its arguments as JSON text, under
 * the outer call's id. Approvals, rules, hooks and guardrails decide on this call exactly as on a
 * direct call of that tool (authority only narrows through the pair). Undefined for any other call,
 * and for a `call_tool` call whose arguments do not name a tool (it then fails its own validation
 * and runs nothing). `call_tool` itself runs exactly this call, so what was decided on is what runs.
 */
export function deferredCallOf(
  call: Pick<ToolCallItem, "call_id" | "name" | "arguments">,
): ToolCallItem | undefined {
  if (call.name !== CALL_TOOL) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.arguments);
  } catch {
    return undefined;
  }
  const inner = innerCallOf(parsed);
  return inner === undefined ? undefined : { type: "tool_call", call_id: call.call_id, ...inner };
}

/** `call_tool`'s arguments as the inner call's name and arguments text (undefined when they name no tool). */
export function innerCallOf(args: unknown): { name: string; arguments: string } | undefined {
  if (!isPlainObject(args) || typeof args.name !== "string") return undefined;
  const inner = args.arguments;
  if (inner !== undefined && !isPlainObject(inner)) return undefined;
  return { name: args.name, arguments: JSON.stringify(inner ?? {}) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
