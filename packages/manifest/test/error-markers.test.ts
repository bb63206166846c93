import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

// Every error class carries its own `Symbol.for("podkit.manifest.error.<kind>")` marker; its
// `isInstance` checks that marker, never the mutable `name` (docs/errors.md).
const CASES = [
  {
    kind: "manifest",
    make: () => new api.ManifestError("m", { kind: "schema", issues: [] }),
    is: api.ManifestError,
  },
  {
    kind: "scope",
    make: () => new api.ScopeError("m", { target: "x", problem: "unresolvable" }),
    is: api.ScopeError,
  },
] as const;

describe("manifest errors carry per-class markers", () => {
  it("has a case for every exported error class but the base", () => {
    const classes = Object.entries(api)
      .filter(([, value]) => typeof value === "function" && value.prototype instanceof Error)
      .map(([name]) => name);
    expect(classes.sort()).toEqual(["ManifestError", "PodkitManifestError", "ScopeError"]);
    expect(CASES.map((c) => c.is.name).sort()).toEqual(["ManifestError", "ScopeError"]);
  });

  it.each(CASES)(
    "$kind: recognised by its marker even when renamed, and only by it",
    ({ kind, make, is }) => {
      const error = make();
      expect(is.isInstance(error)).toBe(true);
      expect(api.PodkitManifestError.isInstance(error)).toBe(true);
      error.name = "Renamed";
      expect(is.isInstance(error)).toBe(true);
      // A base-class error that merely copies the name is not the subclass.
      const impostor = Object.assign(new api.PodkitManifestError("x"), { name: is.name });
      expect(is.isInstance(impostor)).toBe(false);
      const foreign = Object.assign(new Error("another copy"), {
        [Symbol.for("podkit.manifest.error")]: true,
        [Symbol.for(`podkit.manifest.error.${kind}`)]: true,
      });
      expect(is.isInstance(foreign)).toBe(true);
      for (const other of CASES) expect(other.is.isInstance(error)).toBe(other.is === is);
    },
  );

  it("the base class recognises no error of another package", () => {
    expect(api.PodkitManifestError.isInstance(new Error("plain"))).toBe(false);
    expect(
      api.PodkitManifestError.isInstance(
        Object.assign(new Error("x"), { [Symbol.for("podkit.pod.error")]: true }),
      ),
    ).toBe(false);
  });
});
