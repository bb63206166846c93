import { AbortedError, ERROR_KINDS, ProviderError } from "@podkit/llm-worker";
import { ManifestError } from "@podkit/manifest";
import { TemplateRenderError } from "@podkit/pod";
import {
  CorruptEntryError,
  InvalidEntryError,
  NotFoundError,
  ReplayError,
  SessionBusyError,
  SessionStoreUsageError,
  UnsupportedFormatError,
} from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { DispatchError, LeaseLostError, RunInputError, UnknownPodError } from "../src/errors.js";
import { isPermanentFailure } from "../src/worker/failure.js";

// Whether a failed attempt is tried again is read off the error's kind (docs/errors.md, "Kinds").
describe("a failed attempt is retried by the kind of its error", () => {
  const byKind = [
    [
      "usage",
      new ProviderError("HTTP 400: bad request", { kind: "http", status: 400, isRetryable: false }),
      false,
    ],
    ["not_found", new NotFoundError({ what: "session", id: "s", where: "/s" }), false],
    [
      "conflict",
      new SessionBusyError({ sessionId: "s", segmentId: "g", expectedCount: 1, actualCount: 2 }),
      true,
    ],
    ["corrupt", new CorruptEntryError({ file: "/s/g.jsonl", line: 3, reason: "not JSON" }), false],
    ["transient", new ProviderError("HTTP 529", { kind: "http", status: 529, isRetryable: true }), true],
    ["unsupported", new UnsupportedFormatError({ file: "/s/g.jsonl", line: 1, kind: "checkpoint" }), true],
    ["internal", new InvalidEntryError({ kind: "turn_end", issues: "turn: expected number" }), true],
  ] as const;

  it("covers every kind", () => {
    expect(byKind.map(([kind]) => kind)).toEqual([...ERROR_KINDS]);
  });

  it.each(byKind)("%s: retried %s", (kind, error, retried) => {
    expect(error.errorKind).toBe(kind);
    expect(isPermanentFailure(error)).toBe(!retried);
  });

  it("dead-letters at once what the class list did before: a missing, damaged or mismatched session, an unknown pod", () => {
    for (const error of [
      new NotFoundError({ what: "session", id: "s", where: "/s" }),
      new CorruptEntryError({ file: "/s/g.jsonl", line: 3, reason: "not JSON" }),
      new ReplayError({ entryIndex: 0, reason: "no segment_start" }),
      new SessionStoreUsageError("bad id"),
      new RunInputError({ runId: "r", at: "s/g:1", problem: "not a submitted entry" }),
      new UnknownPodError("reviewer", ["writer"]),
    ]) {
      expect(isPermanentFailure(error), error.name).toBe(true);
    }
  });

  it("and now also a manifest, a template or a request the provider refuses: each fails the same way again", () => {
    const at = { template: "t", file: undefined, line: 1, column: 1 };
    for (const error of [
      new ManifestError("m.toml:1: bad", { kind: "schema", issues: [] }),
      new TemplateRenderError("undefined variable", at),
      new ProviderError("HTTP 401", { kind: "http", status: 401, isRetryable: false }),
    ]) {
      expect(isPermanentFailure(error), error.name).toBe(true);
    }
  });

  it("hands back what a stopping worker aborts: the abort, the worker's reason, a lost lease", () => {
    expect(isPermanentFailure(new AbortedError())).toBe(false);
    expect(isPermanentFailure(new DispatchError("the worker was stopped"))).toBe(false);
    expect(isPermanentFailure(new LeaseLostError("r", "expired"))).toBe(false);
  });

  it("retries anything without a kind, as any unknown failure: a crash, a claim made by something not podkit's", () => {
    expect(isPermanentFailure(new TypeError("x is undefined"))).toBe(false);
    expect(isPermanentFailure(Object.assign(new Error("boom"), { errorKind: "usage" }))).toBe(false);
    expect(isPermanentFailure("a string")).toBe(false);
  });
});
