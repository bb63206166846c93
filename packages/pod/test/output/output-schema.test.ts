import { createHash } from "node:crypto";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { PodUsageError } from "../../src/errors.js";
import { toOutputSchema } from "../../src/output/output-schema.js";
import { caught } from "../helpers.js";

const Review = z.object({
  verdict: z.enum(["approve", "reject"]),
  findings: z.array(z.object({ line: z.number().int(), note: z.string() })).optional(),
  severity: z.number().default(1),
});

const REVIEW_JSON = {
  type: "object",
  properties: {
    verdict: { enum: ["approve", "reject"] },
    findings: { type: "array", items: { $ref: "#/$defs/finding" } },
  },
  required: ["verdict"],
  $defs: {
    finding: {
      type: "object",
      properties: { line: { type: "integer" }, note: { type: "string" } },
      required: ["line", "note"],
    },
  },
};

describe("toOutputSchema from zod", () => {
  it("sends the JSON Schema of what the model writes, without $schema", () => {
    const schema = toOutputSchema(Review);
    expect(schema.jsonSchema).toMatchObject({
      type: "object",
      properties: { verdict: { type: "string", enum: ["approve", "reject"] }, severity: { default: 1 } },
      required: ["verdict"],
    });
    expect(schema.jsonSchema).not.toHaveProperty("$schema");
    expect(schema.arrayProperties).toEqual(["findings"]);
  });

  it("validates with zod: its output (defaults filled) and typed as z.infer", () => {
    const schema = toOutputSchema(Review);
    const result = schema.validate({ verdict: "approve" });
    expect(result).toEqual({ ok: true, value: { verdict: "approve", severity: 1 } });
    if (result.ok) expectTypeOf(result.value).toEqualTypeOf<z.output<typeof Review>>();
  });

  it("reports each violation at a JSON Pointer", () => {
    const result = toOutputSchema(Review).validate({
      verdict: "maybe",
      findings: [{ line: 1.5, note: "x" }],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((issue) => issue.path)).toEqual(["/verdict", "/findings/0/line"]);
    expect(result.issues[0]?.message).toMatch(/approve.*reject/);
  });

  it("refuses a root that is not an object, and types JSON Schema cannot express", async () => {
    const list = await caught(async () => toOutputSchema(z.array(z.string())));
    expect(PodUsageError.isInstance(list)).toBe(true);
    expect((list as PodUsageError).message).toContain(
      'the schema\'s root must describe an object ("type": "object")',
    );
    expect((list as PodUsageError).hint).toMatch(/z\.object/);
    const dated = await caught(async () => toOutputSchema(z.object({ when: z.date() })));
    expect(PodUsageError.isInstance(dated)).toBe(true);
    expect((dated as PodUsageError).message).toMatch(/^the output schema cannot be written as JSON Schema/);
  });
});

describe("toOutputSchema from JSON Schema", () => {
  it("validates with ajv, every violation reported", () => {
    const schema = toOutputSchema(REVIEW_JSON);
    expect(schema.jsonSchema).toBe(REVIEW_JSON);
    expect(schema.validate({ verdict: "reject", findings: [] })).toEqual({
      ok: true,
      value: { verdict: "reject", findings: [] },
    });
    expect(schema.validate({ findings: [{ line: "3" }] })).toEqual({
      ok: false,
      issues: [
        { path: "", message: "must have required property 'verdict'" },
        { path: "/findings/0", message: "must have required property 'note'" },
        { path: "/findings/0/line", message: "must be integer" },
      ],
    });
  });

  it("refuses a schema that is not an object schema, or not a JSON Schema", async () => {
    const list = await caught(async () => toOutputSchema({ type: "array" }));
    expect(PodUsageError.isInstance(list) && list.message).toBe(
      'the output schema cannot be used: the schema\'s root must describe an object ("type": "object"), got "type": "array"; wrap other values in a property',
    );
    const broken = await caught(async () => toOutputSchema({ type: "object", required: "verdict" }));
    expect(PodUsageError.isInstance(broken) && broken.message).toMatch(
      /is not a valid JSON Schema: \/required/,
    );
  });
});

describe("the digest", () => {
  it("is sha256 of the canonical JSON: key order does not matter, content does", () => {
    const a = toOutputSchema({ type: "object", properties: { a: { type: "string", minLength: 1 } } });
    const b = toOutputSchema({ properties: { a: { minLength: 1, type: "string" } }, type: "object" });
    const c = toOutputSchema({ type: "object", properties: { a: { type: "string" } } });
    const canonical = '{"properties":{"a":{"minLength":1,"type":"string"}},"type":"object"}';
    expect(a.digest).toBe(`sha256:${createHash("sha256").update(canonical).digest("hex")}`);
    expect(b.digest).toBe(a.digest);
    expect(c.digest).not.toBe(a.digest);
  });

  it("is the same for a zod schema and the JSON Schema it converts to", () => {
    const zod = toOutputSchema(z.object({ a: z.string() }));
    expect(toOutputSchema(structuredClone(zod.jsonSchema)).digest).toBe(zod.digest);
  });
});

describe("validateElement (streamed arrays)", () => {
  it("checks an element of a top-level array against its item schema, $defs references included", () => {
    const schema = toOutputSchema(REVIEW_JSON);
    expect(schema.validateElement("findings", { line: 3, note: "ok" })).toEqual({
      ok: true,
      value: { line: 3, note: "ok" },
    });
    expect(schema.validateElement("findings", { line: 3 })).toEqual({
      ok: false,
      issues: [{ path: "", message: "must have required property 'note'" }],
    });
    expect(schema.validateElement("verdict", "approve")).toBeUndefined();
    expect(schema.validateElement("missing", 1)).toBeUndefined();
  });

  it("uses the zod element schema, through optional", () => {
    const schema = toOutputSchema(Review);
    expect(schema.validateElement("findings", { line: 2, note: "n" })?.ok).toBe(true);
    const bad = schema.validateElement("findings", { line: 2.5, note: "n" });
    expect(bad?.ok === false && bad.issues.map((issue) => issue.path)).toEqual(["/line"]);
  });
});
