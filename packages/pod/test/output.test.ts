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
