import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifest, ManifestError } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

const MINIMAL = `[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`;
const VERDICT = {
  type: "object",
  properties: {
    verdict: { enum: ["approve", "reject"] },
    reasons: { type: "array", items: { type: "string" } },
  },
  required: ["verdict"],
};

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
  await t.mkdir("proj/.podkit");
});
afterEach(async () => {
  await t.cleanup();
});

async function load(file: string, overlays: string[] = []) {
  return loadManifest({ file, overlays, env: t.env("proj") });
}

async function failure(promise: Promise<unknown>): Promise<ManifestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ManifestError.isInstance(error)) throw new Error(`expected a ManifestError, got ${String(error)}`);
  return error;
}

describe("[output]", () => {
  it("is absent without the table", async () => {
    const loaded = await load(await t.write("proj/pod.toml", MINIMAL));
    expect(loaded.manifest.output).toBeUndefined();
  });

  it("reads a schema file relative to the manifest, with the tool strategy and two repairs by default", async () => {
    const schemaFile = await t.write("proj/pods/schemas/verdict.json", JSON.stringify(VERDICT, null, 2));
    const loaded = await load(
      await t.write("proj/pods/reviewer.toml", `${MINIMAL}[output]\nschema = "schemas/verdict.json"\n`),
    );
    expect(loaded.manifest.output).toEqual({
      schema: VERDICT,
      schemaSource: schemaFile,
      strategy: "tool",
      max_repairs: 2,
    });
    expect(loaded.provenance.get("output.strategy")?.layer.kind).toBe("builtin");
    expect(loaded.provenance.get("output.max_repairs")?.layer.kind).toBe("builtin");
    expect(loaded.provenance.get("output.schema")).toMatchObject({ layer: { kind: "file" }, line: 6 });
  });

  it("takes an inline table, a strategy and max_repairs = 0", async () => {
    const loaded = await load(
      await t.write(
        "proj/pod.toml",
        `${MINIMAL}[output]\nstrategy = "native"\nmax_repairs = 0\n[output.schema]\ntype = "object"\nrequired = ["verdict"]\n[output.schema.properties.verdict]\nenum = ["approve", "reject"]\n`,
      ),
    );
    expect(loaded.manifest.output).toEqual({
      schema: {
        type: "object",
        required: ["verdict"],
        properties: { verdict: { enum: ["approve", "reject"] } },
      },
      schemaSource: "inline",
      strategy: "native",
      max_repairs: 0,
    });
  });

  it("takes the topmost layer's schema whole, never merged with a lower one", async () => {
    await t.write(
      "proj/.podkit/manifest.toml",
      `[output]\nmax_repairs = 5\n[output.schema]\ntype = "object"\nrequired = ["a"]\n[output.schema.properties.a]\ntype = "string"\n`,
    );
    const file = await t.write(
      "proj/pod.toml",
      `${MINIMAL}[output.schema]\ntype = "object"\n[output.schema.properties.b]\ntype = "number"\n`,
    );
    const loaded = await load(file);
    expect(loaded.manifest.output?.schema).toEqual({ type: "object", properties: { b: { type: "number" } } });
    expect(loaded.manifest.output?.max_repairs).toBe(5); // the other keys of [output] still merge
    expect(loaded.provenance.has("output.schema.properties.a.type")).toBe(false);
    expect(loaded.provenance.get("output.schema.properties.b.type")?.layer.kind).toBe("file");

    // A path set above replaces an inline table below, and a --set path resolves against the cwd.
    await t.write(
      "proj/other.json",
      JSON.stringify({ type: "object", properties: { c: { type: "boolean" } } }),
    );
    const overlaid = await load(file, ['output.schema="other.json"']);
    expect(overlaid.manifest.output).toMatchObject({
      schema: { type: "object", properties: { c: { type: "boolean" } } },
      schemaSource: t.path("proj/other.json"),
    });
    expect(overlaid.provenance.has("output.schema.properties.b.type")).toBe(false);
  });

  it("loads a role's output schema, relative to the manifest that declares the role", async () => {
    const schemaFile = await t.write("proj/pods/verdict.json", JSON.stringify(VERDICT));
    const loaded = await load(
      await t.write(
        "proj/pods/lead.toml",
        `${MINIMAL}[subpods.reviewer]\ndescription = "reviews"\n[subpods.reviewer.output]\nschema = "verdict.json"\nmax_repairs = 1\n`,
      ),
    );
    expect(loaded.manifest.subpods.reviewer?.output).toEqual({
      schema: VERDICT,
      schemaSource: schemaFile,
      strategy: "tool",
      max_repairs: 1,
    });
    expect(loaded.manifest.output).toBeUndefined();
  });

  it("names the manifest, the line and the key of a schema file that is missing, not JSON, or no output schema", async () => {
    const missing = await failure(
      load(await t.write("proj/a.toml", `${MINIMAL}[output]\nschema = "nope.json"\n`)),
    );
    expect(missing.file).toBe(t.path("proj/a.toml"));
    expect(missing.line).toBe(6);
    expect(missing.keyPath).toBe("output.schema");
    expect(missing.message).toBe(
      "a.toml:6: output.schema: schema file not found: nope.json (a path is relative to the manifest that sets it)",
    );
    expect(missing.hint).toMatch(/"type": "object" at its root \(docs\/output\.md\)/);

    await t.write("proj/broken.json", '{\n  "type": "object",\n  "properties": {,}\n}\n');
    const broken = await failure(
      load(await t.write("proj/b.toml", `${MINIMAL}[output]\nschema = "broken.json"\n`)),
    );
    expect(broken.keyPath).toBe("output.schema");
    expect(broken.message).toMatch(
      /output\.schema: schema file broken\.json is not JSON: .*line 3, column 18/,
    );

    await t.write("proj/list.json", JSON.stringify({ type: "array", items: { type: "string" } }));
    const list = await failure(
      load(await t.write("proj/c.toml", `${MINIMAL}[output]\nschema = "list.json"\n`)),
    );
    expect(list.message).toContain(
      'schema file list.json: the schema\'s root must describe an object ("type": "object"), got "type": "array"',
    );

    await t.write("proj/typo.json", JSON.stringify({ type: "object", properties: { a: { type: "strin" } } }));
    const typo = await failure(
      load(await t.write("proj/d.toml", `${MINIMAL}[output]\nschema = "typo.json"\n`)),
    );
    expect(typo.message).toContain("schema file typo.json: is not a valid JSON Schema: /properties/a/type:");

    await t.write(
      "proj/ref.json",
      JSON.stringify({ type: "object", properties: { a: { $ref: "#/$defs/gone" } } }),
    );
    const ref = await failure(
      load(await t.write("proj/e.toml", `${MINIMAL}[output]\nschema = "ref.json"\n`)),
    );
    expect(ref.message).toMatch(/schema file ref\.json: is not a valid JSON Schema: can't resolve reference/);

    const dir = await failure(load(await t.write("proj/f.toml", `${MINIMAL}[output]\nschema = "."\n`)));
    expect(dir.message).toContain("is a directory, not a JSON file");
  });

  it("refuses [output] without a schema, an inline date, and bad strategy or max_repairs", async () => {
    const noSchema = await failure(
      load(await t.write("proj/a.toml", `${MINIMAL}[output]\nstrategy = "tool"\n`)),
    );
    expect(noSchema.keyPath).toBe("output");
    expect(noSchema.message).toContain('[output] needs schema = "<path to a JSON Schema file>"');
    expect(noSchema.hint).toMatch(/docs\/manifest\.md/);

    const date = await failure(
      load(
        await t.write("proj/b.toml", `${MINIMAL}[output.schema]\ntype = "object"\nexamples = [1979-05-27]\n`),
      ),
    );
    expect(date.keyPath).toBe("output.schema");
    expect(date.message).toContain("the schema: holds a date at /examples/0, which is not JSON data");

    const strategy = await failure(
      load(await t.write("proj/c.toml", `${MINIMAL}[output]\nstrategy = "json"\n`)),
    );
    expect(strategy.keyPath).toBe("output.strategy");
    expect(strategy.message).toContain('expected "tool" | "native" | "auto"');

    const repairs = await failure(
      load(await t.write("proj/d.toml", `${MINIMAL}[output]\nmax_repairs = -1\n`)),
    );
    expect(repairs.keyPath).toBe("output.max_repairs");
    expect(repairs.message).toContain("must be ≥ 0");

    const wrongType = await failure(load(await t.write("proj/e.toml", `${MINIMAL}[output]\nschema = 3\n`)));
    expect(wrongType.message).toContain(
      'output.schema: expected a path to a JSON Schema file ("schemas/verdict.json") or an inline table, got integer 3',
    );

    const prefixed = await failure(
      load(await t.write("proj/f.toml", `${MINIMAL}[output]\nschema = "$workspace/v.json"\n`)),
    );
    expect(prefixed.keyPath).toBe("output.schema");
    expect(prefixed.message).toContain("a schema file path cannot be a $prefix reference");

    const unknown = await failure(
      load(await t.write("proj/g.toml", `${MINIMAL}[output]\nformat = "json"\n`)),
    );
    expect(unknown.message).toContain("keys allowed in [output]: schema, strategy, max_repairs");
  });

  it("names a role's schema key, and keeps the general hint when other keys are wrong too", async () => {
    const role = await failure(
      load(
        await t.write(
          "proj/a.toml",
          `${MINIMAL}[subpods.reviewer]\ndescription = "reviews"\n[subpods.reviewer.output]\nschema = "gone.json"\n`,
        ),
      ),
    );
    expect(role.keyPath).toBe("subpods.reviewer.output.schema");
    expect(role.line).toBe(8);
    expect(role.hint).toMatch(/docs\/output\.md/);

    const mixed = await failure(
      load(
        await t.write(
          "proj/b.toml",
          `[model]\nref = "anthropic/claude-sonnet-4-5"\n[output]\nschema = "gone.json"\n`,
        ),
      ),
    );
    expect(mixed.issues.map((issue) => issue.keyPath)).toEqual(["pod.name", "output.schema"]);
    expect(mixed.hint).toMatch(/docs\/manifest\.md/);
  });
});
