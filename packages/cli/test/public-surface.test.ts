import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/cli", () => {
  it("exports the command runner, its command list and its errors, none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "OutputSchemaFileError",
      "PodkitCliError",
      "ScorerModuleError",
      "UsageError",
      "commands",
      "main",
    ]);
    // How a command prints, asks and reports stays inside the package.
    for (const internal of ["reportError", "openPod", "textEventPrinter", "approvalHook", "hintForError"]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });
});
