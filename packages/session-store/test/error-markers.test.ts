import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AppendFailedError,
  ApprovalAlreadyAnsweredError,
  ApprovalDelegatedError,
  ApprovalNotFoundError,
  ApprovalNotPendingError,
  BlobCorruptError,
  CorruptEntryError,
  ERROR_KINDS,
  InvalidApprovalAnswerError,
  InvalidEntryError,
  LockTimeoutError,
  NotFoundError,
  ReplayError,
  SessionBusyError,
  SessionStoreError,
  SessionStoreUsageError,
  UnsupportedFormatError,
} from "../src/index.js";

// Every error class carries its own `Symbol.for("podkit.session-store.error.<kind>")` marker and
// its `isInstance` checks that marker, never the mutable `name`, so it recognises errors made by
// another copy of the package (two versions installed side by side) and nothing else.
const CASES = [
  {
    kind: "corrupt-entry",
    errorKind: "corrupt",
    make: () => new CorruptEntryError({ file: "/s/g.jsonl", line: 3, reason: "not valid JSON" }),
    is: CorruptEntryError,
  },
  {
    kind: "unsupported-format",
    errorKind: "unsupported",
    make: () => new UnsupportedFormatError({ file: "/s/g.jsonl", line: 1, version: 9 }),
    is: UnsupportedFormatError,
  },
  {
    kind: "invalid-entry",
    errorKind: "internal",
    make: () => new InvalidEntryError({ kind: "turn_end", issues: "turn: expected number" }),
    is: InvalidEntryError,
  },
  {
    kind: "append-failed",
    errorKind: "transient",
    make: () => new AppendFailedError({ file: "/s/g.jsonl", detail: "ENOSPC" }),
    is: AppendFailedError,
  },
  {
    kind: "lock-timeout",
    errorKind: "conflict",
    make: () => new LockTimeoutError({ lockFile: "/s/g.jsonl.lock", holderPid: 42, waitedMs: 10_000 }),
    is: LockTimeoutError,
  },
  {
    kind: "not-found",
    errorKind: "not_found",
    make: () => new NotFoundError({ what: "session", id: "s", where: "/sessions" }),
    is: NotFoundError,
  },
  {
    kind: "usage",
    errorKind: "usage",
    make: () => new SessionStoreUsageError("keep at least 1"),
    is: SessionStoreUsageError,
  },
  {
    kind: "replay",
    errorKind: "corrupt",
    make: () => new ReplayError({ entryIndex: 0, reason: "no segment_start" }),
    is: ReplayError,
  },
  {
    kind: "session-busy",
    errorKind: "conflict",
    make: () => new SessionBusyError({ sessionId: "s", segmentId: "g", expectedCount: 3, actualCount: 4 }),
    is: SessionBusyError,
  },
  {
    kind: "approval-not-found",
    errorKind: "not_found",
    make: () => new ApprovalNotFoundError({ sessionId: "s", callId: "c", pending: ["d"] }),
    is: ApprovalNotFoundError,
  },
  {
    kind: "approval-already-answered",
    errorKind: "conflict",
    make: () =>
      new ApprovalAlreadyAnsweredError({
        sessionId: "s",
        record: {
          callId: "c",
          tool: "bash",
          arguments: "{}",
          podPath: ["root"],
          askedBy: "bash",
          requestedAt: 1,
          closed: false,
          answer: { decision: "allow", by: "ops", at: 2 },
        },
      }),
    is: ApprovalAlreadyAnsweredError,
  },
  {
    kind: "approval-not-pending",
    errorKind: "conflict",
    make: () => new ApprovalNotPendingError({ sessionId: "s", callId: "c" }),
    is: ApprovalNotPendingError,
  },
  {
    kind: "approval-delegated",
    errorKind: "conflict",
    make: () => new ApprovalDelegatedError({ sessionId: "s", callId: "c", childSessionId: "child" }),
    is: ApprovalDelegatedError,
  },
  {
    kind: "blob-corrupt",
    errorKind: "corrupt",
    make: () =>
      new BlobCorruptError({
        digest: `sha256:${"a".repeat(64)}`,
        where: "/s/.blobs",
        reason: "bytes differ",
      }),
    is: BlobCorruptError,
  },
  {
    kind: "invalid-approval-answer",
    errorKind: "usage",
    make: () => new InvalidApprovalAnswerError("decision: expected allow or deny"),
    is: InvalidApprovalAnswerError,
  },
] as const;

describe("session-store errors carry per-class markers", () => {
  it.each(CASES)("$kind: recognised by its own marker, whatever its name", ({ kind, make, is }) => {
    const error = make();
    expect(is.isInstance(error)).toBe(true);
    expect(SessionStoreError.isInstance(error)).toBe(true);
    expect(
      (error as unknown as Record<symbol, unknown>)[Symbol.for(`podkit.session-store.error.${kind}`)],
    ).toBe(true);
    error.name = "SomethingElse";
    expect(is.isInstance(error)).toBe(true);
  });

  it.each(CASES)("$kind: is of kind $errorKind, one of the vocabulary", ({ make, errorKind }) => {
    expect(ERROR_KINDS).toContain(errorKind);
    expect(make().errorKind).toBe(errorKind);
  });

  it("a bare SessionStoreError is another writer in between, unless its thrower says otherwise", () => {
    expect(new SessionStoreError("segment changed under this writer").errorKind).toBe("conflict");
    expect(new SessionStoreError("x", { errorKind: "transient" }).errorKind).toBe("transient");
  });

  it.each(CASES)(
    "$kind: an error of another copy of the package is recognised, a namesake is not",
    ({ kind, is }) => {
      const foreign = Object.assign(new Error("from another copy"), {
        [Symbol.for("podkit.session-store.error")]: true,
        [Symbol.for(`podkit.session-store.error.${kind}`)]: true,
      });
      expect(is.isInstance(foreign)).toBe(true);
      expect(SessionStoreError.isInstance(foreign)).toBe(true);
      expect(is.isInstance(Object.assign(new Error("x"), { name: is.name }))).toBe(false);
      expect(is.isInstance(Object.assign(new SessionStoreError("x"), { name: is.name }))).toBe(false);
    },
  );

  it.each(CASES)("$kind: no other class claims it", ({ make, is }) => {
    const error = make();
    for (const other of CASES)
      expect(other.is.isInstance(error), `${other.is.name}.isInstance(${is.name})`).toBe(other.is === is);
  });

  it("the package has one marker check, and no error is identified by its name", async () => {
    const src = join(import.meta.dirname, "..", "src");
    const files = (await readdir(src, { recursive: true })).filter(
      (file) => file.endsWith(".ts") && !file.endsWith(".test.ts"),
    );
    let definitions = 0;
    for (const file of files) {
      const source = await readFile(join(src, file), "utf8");
      definitions += source.match(/function hasMarker\(/g)?.length ?? 0;
      expect(source, file).not.toMatch(/\.name ===|name === "[A-Za-z]*Error"/);
    }
    expect(definitions).toBe(1);
  });
});
