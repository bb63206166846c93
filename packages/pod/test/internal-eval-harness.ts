import type { CapturedRequest, ScriptedResponse } from "@podkit/testkit";

/** The first line of the builtin `compact_system` (and of the test packs): marks a compaction request. */
export const COMPACTION_HEADER = "[Compaction request from the runtime]";

/** The builtin `compact_system`'s instruction the stand-in model obeys (it keeps the exact texts). */
export const KEEP_EXACT = "Keep identifiers, paths, commands and quotes exact.";

/** A worse `compact_system`: the header, but no instruction to keep anything exact. */
export const VAGUE_COMPACT_PACK = `[prompt]
compact_system = """
${COMPACTION_HEADER}
Summarise the conversation above in one or two plain sentences, then call write_summary."""
`;

/** A changed `compact_system` that keeps the builtin's instructions (it includes it) and adds one. */
export const REWORDED_COMPACT_PACK = `[prompt]
compact_system = """
{% include "$podkit/internal/compact_system" %}

Prefer bullet points over prose."""
`;

/** The summary the stand-in model writes when it is not asked to keep anything exact. */
export const VAGUE_SUMMARY = "The user asked a few questions about the project and they were answered.";

// biome-ignore lint/suspicious/noExplicitAny: Anthropic request bodies as JSON.
type Message = any;

const partsOf = (message: Message): Message[] =>
  typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;

/**
 * The compaction side of a stand-in model (Anthropic wire): on a compaction request (its newest
 * user message starts with `COMPACTION_HEADER`) it calls `write_summary` — with every user input
 * of the conversation verbatim and every `path` its tool calls named when the instruction says
 * `KEEP_EXACT`, else with `VAGUE_SUMMARY` — then answers "Summary written.". Any other request:
 * undefined. Deterministic for a given request, so a recording and its replay compare exactly.
 */
export function compactingModel(request: CapturedRequest): ScriptedResponse | undefined {
  const messages: Message[] = request.body.messages ?? [];
  const at = messages.findLastIndex(
    (m) =>
      m.role === "user" &&
      partsOf(m).some((p: Message) => p.type === "text" && p.text.startsWith(COMPACTION_HEADER)),
  );
  if (at < 0) return undefined;
  const usage = { inputTokens: 900, outputTokens: 40, cacheReadTokens: 800 };
  if (messages.slice(at + 1).some((m) => m.role === "assistant"))
    return { parts: [{ type: "text", text: "Summary written." }], usage };
  const instruction = partsOf(messages[at]).find((p: Message) => p.type === "text").text as string;
  let summary = VAGUE_SUMMARY;
  if (instruction.includes(KEEP_EXACT)) {
    const inputs: string[] = [];
    const paths = new Set<string>();
    for (const message of messages.slice(0, at)) {
      for (const part of partsOf(message)) {
        if (message.role === "user" && part.type === "text" && !part.text.startsWith("["))
          inputs.push(part.text);
        if (part.type === "tool_use" && typeof part.input?.path === "string") paths.add(part.input.path);
      }
    }
    summary = `## Goal\n${inputs.map((i) => `- "${i}"`).join("\n")}\n## Files\n${[...paths].map((p) => `- ${p}`).join("\n")}`;
  }
  return { parts: [{ type: "tool_call", name: "write_summary", arguments: { summary } }], usage };
}
