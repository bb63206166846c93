import type { ScriptedResponse } from "@podkit/testkit";

/**
 * A `[subpods.<role>]` table for a test workspace: the role's system prompt (what the provider
 * double routes on), bash when asked for, and a loan of the whole workspace.
 */
export function roleToml(
  role: string,
  options: { systemPrompt: string; bash?: boolean; permission?: "read" | "write" },
): string {
  return `
[subpods.${role}]
description = "the ${role}"
[subpods.${role}.worker]
system_prompt = "${options.systemPrompt}"
[subpods.${role}.tools]
bash = ${options.bash === true}
[[subpods.${role}.scope.allow]]
target = ".."
permission = "${options.permission ?? "write"}"
`;
}

/** A scripted answer that is one tool call with a fixed id. */
export const scriptedCall = (name: string, args: Record<string, unknown>, id: string): ScriptedResponse => ({
  parts: [{ type: "tool_call", name, arguments: args, id }],
});

/** A scripted answer that is text. */
export const scriptedText = (value: string): ScriptedResponse => ({ parts: [{ type: "text", text: value }] });
