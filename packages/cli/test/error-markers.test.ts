import { describe, expect, it } from "vitest";
import { describeErrorScheme } from "../../../test-support/error-scheme.js";
import * as api from "../src/index.js";

// The CLI's own errors follow the scheme of docs/errors.md: a marker per class, never the name.
describeErrorScheme("cli", api, {
  PodkitCliError: () => new api.PodkitCliError("no manifest", { hint: "run podkit init" }),
  UsageError: () => new api.UsageError("bad flag", { hint: "see --help" }),
});

describe("cli errors", () => {
  it("a usage error exits with 2, any other with its own code or 1", () => {
    expect(new api.UsageError("bad flag", { hint: "see --help" }).exitCode).toBe(2);
    expect(new api.PodkitCliError("x").exitCode).toBe(1);
    expect(new api.PodkitCliError("x", { exitCode: 3 }).exitCode).toBe(3);
  });
});
