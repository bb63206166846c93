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
  },
  { PodkitCliError: "usage", UsageError: "usage" },
);

describe("cli errors", () => {
  it("a CLI error is of kind usage unless its thrower says otherwise", () => {
    expect(new api.PodkitCliError("x").errorKind).toBe("usage");
    expect(new api.PodkitCliError("no session x", { errorKind: "not_found" }).errorKind).toBe("not_found");
  });
});
