import { describe, expect, it } from "vitest";
import { checkOutputSchema, compileJsonSchema } from "../src/index.js";

const VERDICT = {
  type: "object",
  properties: {
    verdict: { enum: ["approve", "reject"] },
    findings: {
      type: "array",
      items: {
        type: "object",
        properties: { line: { type: "integer" }, note: { type: "string" } },
        required: ["line", "note"],
        additionalProperties: false,
      },
    },
    contact: { type: "string", format: "email" },
  },
  required: ["verdict"],
};

function compiled(schema: unknown) {
  const result = compileJsonSchema(schema);
  if (!result.ok) throw new Error(result.problem);
  return result.validate;
}

describe("compileJsonSchema", () => {
  it("reports every violation with a JSON Pointer and what would be right", () => {
    const validate = compiled(VERDICT);
    expect(validate({ verdict: "approve", findings: [{ line: 3, note: "ok" }] })).toEqual([]);
    expect(
      validate({ verdict: "maybe", findings: [{ line: 1.5, note: "x", extra: true }, { note: 2 }] }),
    ).toEqual([
      { path: "/verdict", message: 'must be one of "approve", "reject"' },
      { path: "/findings/0", message: 'must not have the property "extra"' },
      { path: "/findings/0/line", message: "must be integer" },
      { path: "/findings/1", message: "must have required property 'line'" },
      { path: "/findings/1/note", message: "must be string" },
    ]);
    expect(validate("text")).toEqual([{ path: "", message: "must be object" }]);
  });

  it("checks the standard formats", () => {
    const validate = compiled(VERDICT);
    expect(validate({ verdict: "approve", contact: "a@example.com" })).toEqual([]);
    expect(validate({ verdict: "approve", contact: "nobody" })).toEqual([
      { path: "/contact", message: 'must match format "email"' },
    ]);
  });

  it("speaks 2020-12 when $schema says so", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false },
      },
    };
    const validate = compiled(schema);
    expect(validate({ pair: ["a", 1] })).toEqual([]);
    expect(validate({ pair: ["a", 1, 2] }).map((issue) => issue.path)).toEqual(["/pair"]);
    // Control: draft-07 does not know prefixItems, so the same tuple passes unchecked there.
    const { $schema: _dialect, ...draft7 } = schema;
    expect(
      compiled({ ...draft7, properties: { pair: { type: "array", prefixItems: [{ type: "string" }] } } })({
        pair: [1],
      }),
    ).toEqual([]);
  });

  it("compiles the same $id again (a manifest loaded twice), recursive references still resolving", () => {
    const schema = {
      $id: "https://example.com/verdict",
      ...VERDICT,
      properties: { ...VERDICT.properties, next: { $ref: "#" } },
    };
    const first = compiled(schema);
    const second = compiled(structuredClone(schema));
    for (const validate of [first, second]) {
      expect(validate({ verdict: "approve", next: { verdict: "later" } })).toEqual([
        { path: "/next/verdict", message: 'must be one of "approve", "reject"' },
      ]);
    }
  });

  it("takes the boolean schemas", () => {
    expect(compiled(true)(42)).toEqual([]);
    expect(compiled(false)(42)).toEqual([{ path: "", message: "boolean schema is false" }]);
  });

  it("refuses what is not a JSON Schema, saying where", () => {
    expect(compileJsonSchema({ type: "object", properties: { a: { type: 5 } } })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^is not a valid JSON Schema: \/properties\/a\/type: /),
    });
    expect(compileJsonSchema([1])).toEqual({
      ok: false,
      problem: "a JSON Schema is an object (or true/false), got an array",
    });
    expect(compileJsonSchema({ type: "object", maximum: Number.POSITIVE_INFINITY })).toEqual({
      ok: false,
      problem: "holds Infinity at /maximum, which JSON cannot represent",
    });
  });
});

describe("checkOutputSchema", () => {
  it("takes a schema whose root describes an object", () => {
    const checked = checkOutputSchema(VERDICT);
    expect(checked.ok && checked.schema).toBe(VERDICT);
    expect(checked.ok && checked.validate({ verdict: "reject" })).toEqual([]);
  });

  it("refuses any other root: the tool strategy sends it as a tool's input schema", () => {
    expect(checkOutputSchema({ type: "array", items: {} })).toEqual({
      ok: false,
      problem:
        'the schema\'s root must describe an object ("type": "object"), got "type": "array"; wrap other values in a property',
    });
    expect(checkOutputSchema({ properties: {} })).toMatchObject({
      problem: expect.stringContaining("got no type"),
    });
    expect(checkOutputSchema({ type: ["object", "null"] })).toMatchObject({
      problem: expect.stringContaining('got "type": ["object","null"]'),
    });
    expect(checkOutputSchema(true)).toEqual({
      ok: false,
      problem: "must be a JSON Schema object, got a boolean",
    });
    expect(checkOutputSchema({ type: "object", required: "a" })).toMatchObject({
      ok: false,
      problem: expect.stringContaining("is not a valid JSON Schema: /required: must be array"),
    });
  });
});
