import type { CapturedRequest, ProviderDoubleOptions, ScriptedResponse } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { testTools, text, toolCall, usePodWorlds } from "./pod-harness.js";

// The prefix test (docs/output.md, "Cache"): a typed answer changes nothing in the requests a
// session sends but the one `final_answer` tool definition. For each wire, the captured request
// bytes of a session with `[output]` equal those of the same session without it, once that one
// definition is taken out; and the typed session's tool list never changes, nor is a tool choice sent.

const world = usePodWorlds();

type Wire = ProviderDoubleOptions["wire"];
const WIRES: Wire[] = ["anthropic", "openai-responses", "openai-chat", "google"];

const SCHEMA = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["approve", "reject"] },
    findings: { type: "array", items: { type: "object", properties: { line: { type: "integer" } } } },
  },
  required: ["verdict", "findings"],
};

const TOOLS = testTools({
  lint: () => "no lint errors",
  test: () => "12 passed",
  blame: () => "ada wrote it",
  size: () => "120 lines",
  owners: () => "team-a",
});

/** Both sessions' calls, in order: the same tool calls, then their answers part. */
const CALLS: ScriptedResponse[] = [
  toolCall("lint", { path: "src/a.ts" }, "call_lint"),
  toolCall("test", {}, "call_test"),
  toolCall("blame", { line: 3 }, "call_blame"),
];

async function session(wire: Wire, typed: boolean) {
  const w = await world({
    // No workspace path in the prompt: the two sessions live in different temp directories.
    systemPrompt: "You review code. date={{ date }}",
    manifestExtra: typed ? `[output]\nschema = "verdict.schema.json"\n` : "",
    files: typed ? { "project/.podkit/verdict.schema.json": JSON.stringify(SCHEMA) } : {},
    toolPackages: [TOOLS],
    double: { wire },
  });
  const pod = await w.pod();
  w.double.enqueue(
    ...CALLS,
    typed ? toolCall("final_answer", { verdict: "approve", findings: [] }, "call_final") : text("Approved."),
  );
  const result = await pod.run("Review src/a.ts");
  expect(result.status).toBe("finished");
  return { w, pod, sessionId: pod.sessionId as string };
}

/** The tool definitions of a captured request body, as the wire lists them, with their names. */
function toolDefinitions(wire: Wire, body: Record<string, unknown>): { name: string; definition: unknown }[] {
  // biome-ignore lint/suspicious/noExplicitAny: provider JSON, read per wire
  const b = body as any;
  switch (wire) {
    case "anthropic":
    case "openai-responses":
      return (b.tools ?? []).map((t: { name: string }) => ({ name: t.name, definition: t }));
    case "openai-chat":
      return (b.tools ?? []).map((t: { function: { name: string } }) => ({
        name: t.function.name,
        definition: t,
      }));
    case "google":
      return (b.tools ?? []).flatMap((t: { functionDeclarations?: { name: string }[] }) =>
        (t.functionDeclarations ?? []).map((d) => ({ name: d.name, definition: d })),
      );
  }
}

/**
 * The request's bytes with the `final_answer` definition cut out, byte for byte: the definition is
 * found as the exact text the client serialized (JSON keeps key order), once, with the comma that
 * joined it to its neighbour.
 */
function withoutAnswerTool(wire: Wire, request: CapturedRequest): string {
  const [answer, ...more] = toolDefinitions(wire, request.body as Record<string, unknown>).filter(
    (t) => t.name === "final_answer",
  );
  expect(answer).toBeDefined();
  expect(more).toEqual([]);
  const definition = JSON.stringify(answer?.definition);
  const raw = request.rawBody;
  const at = raw.indexOf(definition);
  expect(at).toBeGreaterThan(-1);
  expect(raw.indexOf(definition, at + 1)).toBe(-1);
  const end = at + definition.length;
  if (raw[end] === ",") return raw.slice(0, at) + raw.slice(end + 1);
  expect(raw[at - 1]).toBe(",");
  return raw.slice(0, at - 1) + raw.slice(end);
}

/** The session's id is the one value two sessions cannot share (OpenAI's `prompt_cache_key`). */
const anonymous = (raw: string, sessionId: string) => raw.replaceAll(sessionId, "<session>");

describe("the prefix test: [output] adds one tool definition and changes no other byte", () => {
  for (const wire of WIRES) {
    it(`on the ${wire} wire, every request of the turn`, async () => {
      const plain = await session(wire, false);
      const typed = await session(wire, true);
      const plainRequests = plain.w.double.requests;
      const typedRequests = typed.w.double.requests;
      // The calls, then the request the answer came back to: four requests on both sides.
      expect(typedRequests).toHaveLength(CALLS.length + 1);
      expect(plainRequests).toHaveLength(CALLS.length + 1);
      for (const [i, request] of typedRequests.entries()) {
        const without = anonymous((plainRequests[i] as CapturedRequest).rawBody, plain.sessionId);
        const cut = anonymous(withoutAnswerTool(wire, request), typed.sessionId);
        expect(cut, `request ${i + 1}`).toBe(without);
        // A control: before the cut, the bytes differ by exactly that definition.
        expect(anonymous(request.rawBody, typed.sessionId)).not.toBe(without);
      }
    });

    it(`on the ${wire} wire, the typed session's tool list never changes and no tool choice is sent`, async () => {
      const typed = await session(wire, true);
      // A second turn with a repair: an invalid answer, the error result, then a valid answer.
      typed.w.double.enqueue(
        toolCall("size", {}, "call_size"),
        toolCall("final_answer", { verdict: "maybe", findings: [] }, "call_bad"),
        toolCall("final_answer", { verdict: "reject", findings: [{ line: 1 }] }, "call_good"),
      );
      expect((await typed.pod.run("And src/b.ts?")).output).toEqual({
        verdict: "reject",
        findings: [{ line: 1 }],
      });
      const requests = typed.w.double.requests;
      expect(requests).toHaveLength(CALLS.length + 1 + 3);
      const first = JSON.stringify(toolDefinitions(wire, requests[0]?.body as Record<string, unknown>));
      expect(first).toContain('"final_answer"');
      for (const request of requests) {
        const body = request.body as Record<string, unknown>;
        expect(JSON.stringify(toolDefinitions(wire, body))).toBe(first);
        expect(body.tool_choice).toBeUndefined();
        expect(body.toolConfig).toBeUndefined();
      }
    });
  }
});
