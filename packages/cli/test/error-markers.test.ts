import { describe, expect, it } from "vitest";
import { describeErrorScheme } from "../../../test-support/error-scheme.js";
import * as api from "../src/index.js";

// The CLI's own errors follow the scheme of docs/errors.md: a marker per class, never the name.
describeErrorScheme(
  "cli",
  api,
  {
    PodkitCliError: () => new api.PodkitCliError("no manifest", { hint: "run podkit init" }),
    UsageError: () => new api.UsageError("bad flag", { hint: "see --help" }),
    OutputSchemaFileError: () => new api.OutputSchemaFileError("verdict.json", "no such file"),
    ScorerModuleError: () => new api.ScorerModuleError("./tone.mjs", "no such file"),
  },
  {
    PodkitCliError: "usage",
    UsageError: "usage",
    OutputSchemaFileError: "usage",
    ScorerModuleError: "usage",
  },
);

describe("cli errors", () => {
  it("an unusable --output-schema file names the file and the problem, with a default hint", () => {
    const error = new api.OutputSchemaFileError("schemas/v.json", "it is not JSON: Unexpected end");
    expect(error.message).toBe("--output-schema schemas/v.json: it is not JSON: Unexpected end");
    expect(error).toMatchObject({ file: "schemas/v.json", problem: "it is not JSON: Unexpected end" });
    expect(error.hint).toMatch(/^give a JSON file holding a JSON Schema with "type": "object"/);
    expect(new api.OutputSchemaFileError("v.json", "x", { hint: "other" }).hint).toBe("other");
  });

  it("an unusable --scorer module names the file and the problem, with a default hint", () => {
    const error = new api.ScorerModuleError("./tone.mjs", "no such file");
    expect(error.message).toBe("--scorer ./tone.mjs: no such file");
    expect(error).toMatchObject({ file: "./tone.mjs", problem: "no such file" });
    expect(error.hint).toMatch(/^a scorer module default-exports a function \(item\) =>/);
    expect(new api.ScorerModuleError("t.mjs", "x", { hint: "other" }).hint).toBe("other");
  });

  it("a CLI error is of kind usage unless its thrower says otherwise", () => {
    expect(new api.PodkitCliError("x").errorKind).toBe("usage");
    expect(new api.PodkitCliError("no session x", { errorKind: "not_found" }).errorKind).toBe("not_found");
  });
});
