import { describe, expect, it } from "vitest";
import { ManifestError, PodkitManifestError, ScopeError } from "../src/errors.js";

// Every error class carries its own `Symbol.for("podkit.manifest.error.<kind>")` marker; its
// `isInstance` checks that marker, never the mutable `name` (docs/errors.md).
const CASES = [
  { kind: "manifest", make: () => new ManifestError("m", { kind: "schema", issues: [] }), is: ManifestError },
  {
    kind: "scope",
    make: () => new ScopeError("m", { target: "x", problem: "unresolvable" }),
    is: ScopeError,
  },
] as const;

describe("manifest errors carry per-class markers", () => {
  it.each(CASES)(
    "$kind: recognised by its marker even when renamed, and only by it",
    ({ kind, make, is }) => {
      const error = make();
      expect(is.isInstance(error)).toBe(true);
      expect(PodkitManifestError.isInstance(error)).toBe(true);
      error.name = "Renamed";
      expect(is.isInstance(error)).toBe(true);
      // A base-class error that merely copies the name is not the subclass.
      const impostor = Object.assign(new PodkitManifestError("x"), { name: is.name });
      expect(is.isInstance(impostor)).toBe(false);
      const foreign = Object.assign(new Error("another copy"), {
        [Symbol.for("podkit.manifest.error")]: true,
        [Symbol.for(`podkit.manifest.error.${kind}`)]: true,
      });
      expect(is.isInstance(foreign)).toBe(true);
      for (const other of CASES) expect(other.is.isInstance(error)).toBe(other.is === is);
    },
  );
});
