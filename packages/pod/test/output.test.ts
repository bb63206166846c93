import type { ProviderDoubleOptions, ScriptedResponse } from "@podkit/testkit";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { OutputValidationError } from "../src/index.js";
import { sessionEntries, testTools, text, toolCall, usePodWorlds } from "./pod-harness.js";

// Typed answers (docs/output.md): the final_answer tool from the first request, checked and
// repaired, recorded as a `final_output` entry — on every wire of the provider double.

const world = usePodWorlds();

const VERDICT_SCHEMA = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["approve", "reject"] },
    findings: {
      type: "array",
      items: { type: "object", properties: { line: { type: "integer" } }, required: ["line"] },
    },
  },
  required: ["verdict", "findings"],
  additionalProperties: false,
};

const OUTPUT = `[output]\nschema = "verdict.schema.json"\n`;

const FIVE_TOOLS = testTools({
  lint: () => "no lint errors",
  test: () => "12 passed",
  blame: () => "ada wrote it",
  size: () => "120 lines",
  owners: () => "team-a",
});

const WIRES: ProviderDoubleOptions["wire"][] = ["anthropic", "openai-responses", "openai-chat", "google"];

const answer = (args: Record<string, unknown>, id = "call_final"): ScriptedResponse =>
  toolCall("final_answer", args, id);

async function outputEntries(workspace: string): Promise<Record<string, unknown>[]> {
  return (await sessionEntries(workspace)).flatMap((e) =>
    e.kind === "extension" && e.domain === "final_output" ? [e.payload as Record<string, unknown>] : [],
  );
}

/** `worker` lands in the harness's `[worker]` table, `output` in `[output]`. */
async function typedWorld(wire: ProviderDoubleOptions["wire"] = "anthropic", output = "", worker = "") {
  return world({
    manifestExtra: worker + OUTPUT + output,
    files: { "project/.podkit/verdict.schema.json": JSON.stringify(VERDICT_SCHEMA) },
    toolPackages: [FIVE_TOOLS],
    double: { wire },
  });
}

describe("a pod with [output] returns a validated object", () => {
  for (const wire of WIRES) {
    it(`on the ${wire} wire, with five tools beside final_answer`, async () => {
      const w = await typedWorld(wire);
      const pod = await w.pod();
      w.double.enqueue(
        toolCall("lint", {}, "call_lint"),
        answer({ verdict: "approve", findings: [{ line: 3 }] }),
      );
      const result = await pod.run("review it");
      expect(result.status).toBe("finished");
      expect(result.output).toEqual({ verdict: "approve", findings: [{ line: 3 }] });
      // Two requests: the lint call, then the answer; the run ends without a third.
      expect(w.double.requests).toHaveLength(2);
      expect(w.double.requests[0]?.rawBody).toContain("final_answer");
      const [entry] = await outputEntries(w.workspace);
      expect(entry).toMatchObject({
        value: { verdict: "approve", findings: [{ line: 3 }] },
        call_id: "call_final",
        normalizations: [],
        repairs: [],
        schema_digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      });
      const kinds = (await sessionEntries(w.workspace)).map((e) => e.kind).slice(-3);
      expect(kinds).toEqual(["extension", "turn_end", "run_completed"]);
    });
  }
});

describe("checked and repaired", () => {
  it("a wrapped answer is unwrapped, and the log says so", async () => {
    const w = await typedWorld();
    const pod = await w.pod();
    w.double.enqueue(answer({ output: { verdict: "reject", findings: [] } }));
    const result = await pod.run("review");
    expect(result.output).toEqual({ verdict: "reject", findings: [] });
    expect((await outputEntries(w.workspace))[0]).toMatchObject({
      normalizations: ["unwrapped:output"],
      repairs: [],
    });
  });

  it("a stringified answer is parsed, and the log says so", async () => {
    const w = await typedWorld();
    const pod = await w.pod();
    w.double.enqueue(answer({ answer: JSON.stringify({ verdict: "approve", findings: [] }) }));
    const result = await pod.run("review");
    expect(result.output).toEqual({ verdict: "approve", findings: [] });
    const [entry] = await outputEntries(w.workspace);
    expect(entry?.normalizations).toEqual(expect.arrayContaining(["parsed_string"]));
  });

  it("an invalid answer fixed on the second try: the model gets the violations; the log keeps the repair", async () => {
    const w = await typedWorld();
    const pod = await w.pod();
    w.double.enqueue(
      answer({ verdict: "maybe", findings: [] }, "call_bad"),
      answer({ verdict: "approve", findings: [] }, "call_good"),
    );
    const result = await pod.run("review");
    expect(result.output).toEqual({ verdict: "approve", findings: [] });
    expect(w.double.requests[1]?.rawBody).toContain("/verdict");
    expect(w.double.requests[1]?.rawBody).toContain("correction 1 of at most 2");
    const [entry] = await outputEntries(w.workspace);
    expect(entry).toMatchObject({ call_id: "call_good", repairs: [{ call_id: "call_bad" }] });
  });

  it("a model that never complies ends with OutputValidationError after max_repairs; no final_output is written", async () => {
    const w = await typedWorld("anthropic", "max_repairs = 1\n");
    const pod = await w.pod();
    w.double.enqueue(answer({ verdict: 1 }, "c1"), answer({ verdict: 2 }, "c2"), text("unused"));
    let error: unknown;
    try {
      await pod.run("review");
    } catch (caught) {
      error = caught;
    }
    expect(OutputValidationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ raw: { verdict: 2 }, repairs: 1 });
    expect((error as OutputValidationError).issues.length).toBeGreaterThan(0);
    expect(await outputEntries(w.workspace)).toEqual([]);
    expect((await sessionEntries(w.workspace)).at(-1)?.kind).toBe("run_errored");
    // The second bad answer ended the run: the model was never asked a third time.
    expect(w.double.requests).toHaveLength(2);
  });

  it("a text answer that is the JSON is taken; other text is sent back once as a repair", async () => {
    const w = await typedWorld();
    const pod = await w.pod();
    w.double.enqueue(text("I think it is fine."), text(JSON.stringify({ verdict: "approve", findings: [] })));
    const result = await pod.run("review");
    expect(result.output).toEqual({ verdict: "approve", findings: [] });
    expect(w.double.requests[1]?.rawBody).toContain("call final_answer");
  });

  it("on the last request max_turns allows, a note asks for final_answer; tool_choice never changes", async () => {
    const w = await typedWorld("anthropic", "", "max_turns = 2\n");
    const pod = await w.pod();
    w.double.enqueue(toolCall("lint", {}, "call_lint"), answer({ verdict: "approve", findings: [] }));
    expect((await pod.run("review")).output).toEqual({ verdict: "approve", findings: [] });
    expect(w.double.requests[0]?.rawBody).not.toContain("call final_answer now");
    expect(w.double.requests[1]?.rawBody).toContain("call final_answer now");
    for (const request of w.double.requests)
      expect(request.body.tool_choice).toEqual(w.double.requests[0]?.body.tool_choice);
  });
});

describe("declared in code", () => {
  it("pod.run(input, { output: zodSchema }) is typed as the schema's output", async () => {
    const w = await world({ toolPackages: [FIVE_TOOLS] });
    const Verdict = z.object({ verdict: z.enum(["approve", "reject"]), score: z.number().min(0).max(1) });
    const pod = await w.pod();
    w.double.enqueue(answer({ verdict: "approve", score: 0.9 }));
    const result = await pod.run("review", { output: Verdict });
    expectTypeOf(result.output).toEqualTypeOf<{ verdict: "approve" | "reject"; score: number }>();
    expect(result.output).toEqual({ verdict: "approve", score: 0.9 });
    // Another schema on a later run would change the cached prefix: refused.
    expect(() => pod.run("again", { output: z.object({ other: z.string() }) })).toThrow(/cannot change/);
  });
});

describe("the native strategy: the provider's structured output", () => {
  const NATIVE_WIRES: ProviderDoubleOptions["wire"][] = ["openai-responses", "openai-chat", "google"];
  for (const wire of NATIVE_WIRES) {
    it(`on the ${wire} wire the schema is sent on every request from the first; the JSON text is the answer`, async () => {
      const w = await typedWorld(wire, 'strategy = "native"\n');
      const pod = await w.pod();
      w.double.enqueue(
        toolCall("lint", {}, "call_lint"),
        text(JSON.stringify({ verdict: "reject", findings: [{ line: 1 }] })),
      );
      const result = await pod.run("review");
      expect(result.output).toEqual({ verdict: "reject", findings: [{ line: 1 }] });
      expect(w.double.requests).toHaveLength(2);
      for (const request of w.double.requests) {
        expect(request.rawBody).not.toContain("final_answer");
        // The schema's enum is in the request's response format, identical on each request.
        expect(request.rawBody).toContain('"approve"');
      }
      const formats = w.double.requests.map((r) =>
        JSON.stringify(r.body.text ?? r.body.response_format ?? r.body.generationConfig),
      );
      expect(new Set(formats).size).toBe(1);
      const [entry] = await outputEntries(w.workspace);
      expect(entry).toMatchObject({ normalizations: [], repairs: [] });
      expect(entry?.call_id).toBeUndefined();
    });
  }

  it("an invalid native answer gets its violations as a note and is fixed on the second try", async () => {
    const w = await typedWorld("openai-responses", 'strategy = "native"\n');
    const pod = await w.pod();
    w.double.enqueue(
      text(JSON.stringify({ verdict: "maybe", findings: [] })),
      text(JSON.stringify({ verdict: "approve", findings: [] })),
    );
    expect((await pod.run("review")).output).toEqual({ verdict: "approve", findings: [] });
    expect(w.double.requests[1]?.rawBody).toContain("/verdict");
    expect((await outputEntries(w.workspace))[0]).toMatchObject({
      repairs: [{ issues: [{ path: "/verdict" }] }],
    });
  });

  it("Anthropic has none podkit can send: native is refused with a hint, auto picks the tool", async () => {
    const refused = await typedWorld("anthropic", 'strategy = "native"\n');
    await expect(refused.pod()).rejects.toMatchObject({
      name: "PodUsageError",
      message: expect.stringContaining("anthropic"),
    });
    const auto = await typedWorld("anthropic", 'strategy = "auto"\n');
    const pod = await auto.pod();
    auto.double.enqueue(answer({ verdict: "approve", findings: [] }));
    expect((await pod.run("review")).output).toEqual({ verdict: "approve", findings: [] });
    expect(auto.double.requests[0]?.rawBody).toContain("final_answer");
  });

  it("auto on OpenAI is native", async () => {
    const w = await typedWorld("openai-chat", 'strategy = "auto"\n');
    const pod = await w.pod();
    w.double.enqueue(text(JSON.stringify({ verdict: "approve", findings: [] })));
    expect((await pod.run("review")).output).toEqual({ verdict: "approve", findings: [] });
    expect(w.double.requests[0]?.rawBody).not.toContain("final_answer");
    expect(w.double.requests[0]?.body.response_format).toBeDefined();
  });
});

describe("a restored pod", () => {
  it("keeps its output schema and answers again; the last answer is in its extensions", async () => {
    const w = await typedWorld();
    const pod = await w.pod();
    w.double.enqueue(answer({ verdict: "approve", findings: [] }, "c1"));
    await pod.run("review");
    const sessionId = pod.sessionId as string;
    await pod.close();
    const restored = await w.restore(sessionId);
    expect(restored.extensions.get("final_output")).toMatchObject({ value: { verdict: "approve" } });
    w.double.enqueue(answer({ verdict: "reject", findings: [{ line: 9 }] }, "c2"));
    expect((await restored.run("and now?")).output).toEqual({ verdict: "reject", findings: [{ line: 9 }] });
    // The same tool list on every request of the session, across the restore.
    const tools = w.double.requests.map((r) => JSON.stringify(r.body.tools));
    expect(new Set(tools).size).toBe(1);
  });
});
