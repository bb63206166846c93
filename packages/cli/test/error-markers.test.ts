import { describe, expect, it } from "vitest";
import { PodkitCliError, UsageError } from "../src/errors.js";

// The CLI's own errors follow the scheme of docs/errors.md: a marker per class, never the name.
describe("cli errors carry per-class markers", () => {
  it("UsageError is recognised by its marker even when renamed, and an impostor by name is not", () => {
    const error = new UsageError("bad flag", { hint: "see --help" });
    expect(UsageError.isInstance(error)).toBe(true);
    expect(PodkitCliError.isInstance(error)).toBe(true);
    expect(error.exitCode).toBe(2);
    error.name = "Renamed";
    expect(UsageError.isInstance(error)).toBe(true);
    expect(UsageError.isInstance(Object.assign(new PodkitCliError("x"), { name: "UsageError" }))).toBe(false);
    expect(UsageError.isInstance(new PodkitCliError("x"))).toBe(false);
  });
});
