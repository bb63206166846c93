import { describe, expect, it } from "vitest";
import { type Tool, ToolError, ToolServer } from "../src/index.js";
import { compileToolSchema } from "../src/tools/tool-schema.js";

function jsonTool(inputSchema: Tool["inputSchema"]): Tool {
  return { name: "t", description: "JSON Schema tool", inputSchema, execute: () => ({ summary: "ran" }) };
}

describe("JSON Schema tool input (the MCP path) is validated by ajv", () => {
  it("draft-07: types, bounds, required and additionalProperties, with messages naming the field", () => {
    const { check } = compileToolSchema(
      jsonTool({
        type: "object",
        properties: { n: { type: "integer", minimum: 1 }, mode: { enum: ["fast", "slow"] } },
        required: ["n"],
        additionalProperties: false,
      }),
    );
    expect(check({ n: 2, mode: "fast" })).toEqual({ ok: true, value: { n: 2, mode: "fast" } });
    expect(check({ n: 0 })).toEqual({ ok: false, message: "n: must be >= 1" });
    expect(check({ mode: "medium" })).toEqual({
      ok: false,
      message: "(root): must have required property 'n'; mode: must be equal to one of the allowed values",
    });
    expect(check({ n: 1, extra: true })).toEqual({
      ok: false,
      message: "(root): must NOT have additional properties",
    });
  });

  it("2020-12 (what MCP servers declare): $defs/$ref, prefixItems, if/then and dependentRequired", () => {
    const { check, jsonSchema } = compileToolSchema(
      jsonTool({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        $defs: { path: { type: "string", minLength: 1 } },
        properties: {
          target: { $ref: "#/$defs/path" },
          range: { type: "array", prefixItems: [{ type: "integer" }, { type: "integer" }], items: false },
          recursive: { type: "boolean" },
          depth: { type: "integer" },
        },
        if: { properties: { recursive: { const: true } }, required: ["recursive"] },
        // biome-ignore lint/suspicious/noThenProperty: `then` is the JSON Schema keyword under test
        then: { required: ["depth"] },
        dependentRequired: { range: ["target"] },
      } as never),
    );
    expect(jsonSchema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(check({ target: "src", range: [1, 2] }).ok).toBe(true);
    expect(check({ target: "" })).toEqual({
      ok: false,
      message: "target: must NOT have fewer than 1 characters",
    });
    expect(check({ target: "a", range: [1, 2, 3] }).ok).toBe(false);
    expect(check({ range: [1, 2] })).toMatchObject({ ok: false, message: expect.stringContaining("target") });
    expect(check({ recursive: true })).toMatchObject({
      ok: false,
      message: expect.stringContaining("depth"),
    });
    expect(check({ recursive: true, depth: 2 }).ok).toBe(true);
  });

  it("a schema ajv cannot compile is a ToolError at flushPending, naming the tool", async () => {
    const server = new ToolServer();
    server.registerTool(jsonTool({ type: "object", properties: { n: { type: "no-such-type" } } } as never));
    const error = await server.flushPending().catch((e: unknown) => e);
    expect(ToolError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ toolName: "t" });
  });
});
