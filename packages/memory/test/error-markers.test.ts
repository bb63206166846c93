import { describe, expect, it } from "vitest";
import {
  MemoryEditError,
  MemoryError,
  MemoryFileRefusedError,
  MemoryLintError,
  MemoryRecordNotFoundError,
  MemoryUsageError,
  MemoryWorkerError,
} from "../src/errors.js";

const cases = [
  ["lint-rejected", MemoryLintError, () => new MemoryLintError([])],
  [
    "record-not-found",
    MemoryRecordNotFoundError,
    () => new MemoryRecordNotFoundError("decision", "x", "hint"),
  ],
  ["edit-mismatch", MemoryEditError, () => new MemoryEditError("m")],
  ["worker-failed", MemoryWorkerError, () => new MemoryWorkerError("extract", "m")],
  ["usage", MemoryUsageError, () => new MemoryUsageError("m")],
  ["file-refused", MemoryFileRefusedError, () => new MemoryFileRefusedError("m")],
] as const;

describe("memory errors carry their own Symbol.for markers", () => {
  for (const [kind, Class, make] of cases) {
    it(`${kind}: recognised by its marker, not by name or prototype`, () => {
      const error = make();
      expect(Class.isInstance(error)).toBe(true);
      expect(MemoryError.isInstance(error)).toBe(true);
      // A copy from another instance of the package: only the markers match.
      const foreign = Object.assign(new Error("copy"), {
        [Symbol.for("podkit.memory.error")]: true,
        [Symbol.for(`podkit.memory.error.${kind}`)]: true,
      });
      expect(Class.isInstance(foreign)).toBe(true);
      // Same name, no marker: not recognised.
      const impostor = Object.assign(new Error("x"), { name: error.name });
      expect(Class.isInstance(impostor)).toBe(false);
      for (const [otherKind, Other] of cases)
        if (otherKind !== kind) expect(Other.isInstance(error)).toBe(false);
    });
  }
});
