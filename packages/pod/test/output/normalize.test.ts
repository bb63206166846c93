import { describe, expect, it } from "vitest";
import { z } from "zod";
import { normalizeAnswer } from "../../src/output/normalize.js";
import { toOutputSchema } from "../../src/output/output-schema.js";

const verdict = toOutputSchema({
  type: "object",
  properties: {
    verdict: { enum: ["approve", "reject"] },
    reasons: { type: "array", items: { type: "string" } },
  },
  required: ["verdict"],
  additionalProperties: false,
});
const answer = { verdict: "approve", reasons: ["tests pass"] };

describe("normalizeAnswer", () => {
  it("takes a valid answer as it is", () => {
    expect(normalizeAnswer(answer, verdict)).toEqual({
      value: answer,
      normalizations: [],
      result: { ok: true, value: answer },
    });
  });

  it("parses an answer sent as a JSON string", () => {
    const sent = `  ${JSON.stringify(answer)}\n`;
    expect(verdict.validate(sent).ok).toBe(false); // the repair is what makes it valid
    expect(normalizeAnswer(sent, verdict)).toEqual({
      value: answer,
      normalizations: ["parsed_string"],
      result: { ok: true, value: answer },
    });
  });

  it.each(["output", "answer", "final_answer", "result"])("unwraps a single-key wrapper %j", (key) => {
    const sent = { [key]: answer };
    expect(verdict.validate(sent).ok).toBe(false);
    expect(normalizeAnswer(sent, verdict)).toMatchObject({
      value: answer,
      normalizations: [`unwrapped:${key}`],
    });
  });

  it("combines the two, shortest first, and logs each step in order", () => {
    expect(normalizeAnswer({ output: JSON.stringify(answer) }, verdict)).toMatchObject({
      value: answer,
      normalizations: ["unwrapped:output", "parsed_string"],
    });
    expect(normalizeAnswer(JSON.stringify({ answer }), verdict)).toMatchObject({
      value: answer,
      normalizations: ["parsed_string", "unwrapped:answer"],
    });
    expect(normalizeAnswer({ output: JSON.stringify({ answer }) }, verdict)).toMatchObject({
      value: answer,
      normalizations: ["unwrapped:output", "parsed_string", "unwrapped:answer"],
    });
  });

  it("applies nothing when no repair makes the answer valid, and reports what was sent", () => {
    const sent = { output: { verdict: "maybe" } };
    const normalized = normalizeAnswer(sent, verdict);
    expect(normalized.value).toBe(sent);
    expect(normalized.normalizations).toEqual([]);
    expect(normalized.result).toEqual({
      ok: false,
      issues: [
        { path: "", message: "must have required property 'verdict'" },
        { path: "", message: 'must not have the property "output"' },
      ],
    });
  });

  it("does not parse a Markdown code fence: that is prose, and goes back to the model", () => {
    const fenced = `\`\`\`json\n${JSON.stringify(answer)}\n\`\`\``;
    expect(normalizeAnswer(fenced, verdict)).toMatchObject({ value: fenced, normalizations: [] });
    expect(normalizeAnswer("not json {", verdict).normalizations).toEqual([]);
  });

  it("never unwraps an answer that is already valid, even with a single key", () => {
    const single = toOutputSchema(z.object({ answer: z.object({ verdict: z.string() }).or(z.string()) }));
    const sent = { answer: { verdict: "approve" } };
    expect(normalizeAnswer(sent, single)).toMatchObject({ value: sent, normalizations: [] });
  });

  it("returns zod's output for the repaired value", () => {
    const withDefault = toOutputSchema(z.object({ verdict: z.string(), severity: z.number().default(1) }));
    expect(normalizeAnswer({ output: { verdict: "approve" } }, withDefault)).toEqual({
      value: { verdict: "approve" },
      normalizations: ["unwrapped:output"],
      result: { ok: true, value: { verdict: "approve", severity: 1 } },
    });
  });
});
