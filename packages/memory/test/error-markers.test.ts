import { ERROR_KINDS } from "@podkit/llm-worker";
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
  ["lint-rejected", MemoryLintError, () => new MemoryLintError([]), "usage"],
  [
    "record-not-found",
    MemoryRecordNotFoundError,
    () => new MemoryRecordNotFoundError("decision", "x", "hint"),
    "not_found",
  ],
  ["edit-mismatch", MemoryEditError, () => new MemoryEditError("m"), "usage"],
  ["worker-failed", MemoryWorkerError, () => new MemoryWorkerError("extract", "m"), "transient"],
  ["usage", MemoryUsageError, () => new MemoryUsageError("m"), "usage"],
  ["file-refused", MemoryFileRefusedError, () => new MemoryFileRefusedError("m"), "usage"],
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

  it("each is of the kind pinned here, one of the vocabulary", () => {
    for (const [kind, , make, errorKind] of cases) {
      expect(ERROR_KINDS, kind).toContain(errorKind);
      expect(make().errorKind, kind).toBe(errorKind);
    }
    expect(new MemoryError("m").errorKind).toBe("usage");
  });

  it("a failed memory job has its cause's kind: a provider's refusal is the setup's, else it may pass later", () => {
    const refused = Object.assign(new Error("HTTP 401"), {
      [Symbol.for("podkit.llm-worker.error")]: true,
      errorKind: "usage",
    });
    expect(new MemoryWorkerError("extract", "m", { cause: refused }).errorKind).toBe("usage");
    expect(new MemoryWorkerError("extract", "m", { cause: new Error("boom") }).errorKind).toBe("transient");
  });
});
