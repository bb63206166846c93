import type { CapturedRequest, ScriptedResponse } from "@podkit/testkit";

/** Each user input's scripted responses, in order: one per model request of its turn. */
export type AgentScript = Readonly<Record<string, readonly ScriptedResponse[]>>;

/**
 * A `respond` for the provider double (Anthropic wire) that plays a scripted agent: it finds the
 * newest user input the script knows in the request and answers with that input's next response
 * (the number of assistant messages after the input says which). Deterministic for a given
 * request, so a recording and its replay get the same answers, and each answer carries a fixed
 * usage (cache reads growing with the step) so token and cache-share totals compare exactly.
 */
export function scriptedAgent(script: AgentScript): (request: CapturedRequest) => ScriptedResponse {
  return (request) => {
    // biome-ignore lint/suspicious/noExplicitAny: the Anthropic request body as JSON.
    const messages: any[] = request.body.messages ?? [];
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i];
      if (message.role !== "user") continue;
      const parts =
        typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
      // biome-ignore lint/suspicious/noExplicitAny: content blocks.
      const input = parts.find((part: any) => part.type === "text" && script[part.text] !== undefined)?.text;
      if (input === undefined) continue;
      const step = messages.slice(i + 1).filter((m) => m.role === "assistant").length;
      const responses = script[input] as readonly ScriptedResponse[];
      const response = responses[Math.min(step, responses.length - 1)] as ScriptedResponse;
      return {
        ...response,
        usage: { inputTokens: 100 + 40 * step, outputTokens: 12, cacheReadTokens: 60 * step },
      };
    }
    return { parts: [{ type: "text", text: "(the script has no answer for this input)" }] };
  };
}

export const say = (text: string): ScriptedResponse => ({ parts: [{ type: "text", text }] });

export const call = (name: string, args: Record<string, unknown>): ScriptedResponse => ({
  parts: [{ type: "tool_call", name, arguments: args }],
});

/** The recorded agent: reads the README, looks a key up, answers; a second turn answers from memory. */
export const RECORDED: AgentScript = {
  "what does the readme say?": [
    call("read_file", { path: "README.md" }),
    call("lookup", { key: "answer" }),
    say("It says readme; the answer is 42."),
  ],
  "and the answer again?": [say("Still 42.")],
  "grep for readme": [call("grep", { pattern: "readme" }), say("Found it in README.md.")],
  "say hello": [say("Hello.")],
};

/** A worse agent: greps instead of reading (a call never recorded) and gets the answer wrong. */
export const WORSE: AgentScript = {
  ...RECORDED,
  "what does the readme say?": [call("grep", { pattern: "answer" }), say("The answer is 7.")],
};

/** An agent that reads another file than the recording did (a divergence), then answers as recorded. */
export const DIVERGING: AgentScript = {
  ...RECORDED,
  "what does the readme say?": [
    call("read_file", { path: "OTHER.md" }),
    call("read_file", { path: "README.md" }),
    call("lookup", { key: "answer" }),
    say("It says readme; the answer is 42."),
  ],
};
