import { type ToolCallItem, ToolServer } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PromptCatalog } from "../../src/catalog/prompt-catalog.js";
import { PodUsageError } from "../../src/errors.js";
import {
  checkFinalAnswer,
  type FinalAnswerCheck,
  finalAnswerTool,
} from "../../src/output/final-answer-tool.js";
import { toOutputSchema } from "../../src/output/output-schema.js";
import { caught } from "../helpers.js";

const Verdict = z.object({ verdict: z.enum(["approve", "reject"]), reasons: z.array(z.string()) });
const schema = toOutputSchema(Verdict);

const call = (args: unknown): ToolCallItem => ({
  type: "tool_call",
  call_id: "call-1",
  name: "final_answer",
  arguments: typeof args === "string" ? args : JSON.stringify(args),
});

describe("the final_answer tool", () => {
  it("is named and described by the catalog, and its input schema is the output schema", async () => {
    const catalog = await PromptCatalog.loadBuiltinOnly();
    const tool = finalAnswerTool({
      name: catalog.render("output_tool_name"),
      description: catalog.render("output_tool_description"),
      schema,
      execute: () => ({ summary: catalog.render("output_accepted") }),
    });
    expect(tool.name).toBe("final_answer");
    expect(tool.readOnly).toBe(true);
    const server = new ToolServer();
    server.registerTool(tool);
    await server.flushPending();
    expect(server.definitions()).toEqual([
      {
        type: "function",
        name: "final_answer",
        description: catalog.render("output_tool_description"),
        inputSchema: schema.jsonSchema,
      },
    ]);
  });

  it("hands execute the checked answer when the tool server runs a call", async () => {
    const seen: FinalAnswerCheck<z.output<typeof Verdict>>[] = [];
    const server = new ToolServer();
    server.registerTool(
      finalAnswerTool({
        name: "final_answer",
        description: "answer",
        schema,
        execute: (check) => {
          seen.push(check);
          return { summary: check.ok ? "taken" : "invalid" };
        },
      }),
    );
    await server.flushPending();
    const output = await server.execute(
      call({ verdict: "approve", reasons: [] }),
      new AbortController().signal,
    );
    expect(output).toEqual({ summary: "taken" });
    expect(seen).toEqual([{ ok: true, value: { verdict: "approve", reasons: [] }, normalizations: [] }]);
  });

  it("refuses a name providers would not accept, pointing at the catalog key", async () => {
    const error = await caught(async () =>
      finalAnswerTool({ name: "final answer!", description: "d", schema, execute: () => ({ summary: "" }) }),
    );
    expect(PodUsageError.isInstance(error)).toBe(true);
    expect((error as PodUsageError).hint).toContain("output_tool_name");
  });
});

describe("checkFinalAnswer", () => {
  it("takes a valid call, and repairs a wrapped or stringified one, saying how", () => {
    const answer = { verdict: "reject", reasons: ["no tests"] };
    expect(checkFinalAnswer(JSON.stringify(answer), schema)).toEqual({
      ok: true,
      value: answer,
      normalizations: [],
    });
    expect(checkFinalAnswer(JSON.stringify({ output: answer }), schema)).toEqual({
      ok: true,
      value: answer,
      normalizations: ["unwrapped:output"],
    });
    expect(checkFinalAnswer(JSON.stringify({ answer: JSON.stringify(answer) }), schema)).toEqual({
      ok: true,
      value: answer,
      normalizations: ["unwrapped:answer", "parsed_string"],
    });
  });

  it("returns the raw answer and its issues for an invalid call, and for arguments that are not JSON", () => {
    expect(checkFinalAnswer('{"verdict": "maybe"}', schema)).toEqual({
      ok: false,
      raw: { verdict: "maybe" },
      issues: [
        { path: "/verdict", message: 'Invalid option: expected one of "approve"|"reject"' },
        { path: "/reasons", message: "Invalid input: expected array, received undefined" },
      ],
    });
    const broken = checkFinalAnswer('{"verdict": ', schema);
    expect(broken).toMatchObject({ ok: false, raw: '{"verdict": ' });
    expect(broken.ok === false && broken.issues).toEqual([
      {
        path: "",
        message: expect.stringMatching(/^the arguments are not valid JSON \(.+\); send a JSON object$/),
      },
    ]);
  });
});

describe("the output catalog strings", () => {
  it("output_repair lists every violation and which correction this is", async () => {
    const catalog = await PromptCatalog.loadBuiltinOnly();
    const issues = [
      { path: "", message: "must have required property 'verdict'" },
      { path: "/reasons/0", message: "must be string" },
    ];
    expect(catalog.render("output_repair", { tool: "final_answer", issues, repair: 1, max_repairs: 2 })).toBe(
      [
        "The answer does not match the required schema:",
        "- (root): must have required property 'verdict'",
        "- /reasons/0: must be string",
        "Call final_answer again with the whole corrected answer (correction 1 of at most 2).",
      ].join("\n"),
    );
    expect(catalog.render("output_repair", { tool: "", issues, repair: 2, max_repairs: 2 })).toMatch(
      /\nAnswer again with the whole corrected answer \(correction 2 of at most 2\)\.$/,
    );
  });

  it("output_forced asks for the answer tool, or for JSON with native output", async () => {
    const catalog = await PromptCatalog.loadBuiltinOnly();
    expect(catalog.render("output_forced", { tool: "final_answer", reason: "max_turns" })).toBe(
      "This run has reached its limit of requests: call final_answer now with your best answer, and no other tool.",
    );
    expect(catalog.render("output_forced", { tool: "", reason: "budget" })).toBe(
      "This run's budget is nearly spent: give your best answer now, as JSON matching the required schema.",
    );
  });
});
