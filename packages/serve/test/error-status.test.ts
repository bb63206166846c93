import { RunInputError } from "@podkit/dispatch";
import { ERROR_KINDS, ProviderError } from "@podkit/llm-worker";
import { PodBusyError } from "@podkit/pod";
import {
  AppendFailedError,
  ApprovalDelegatedError,
  ApprovalNotFoundError,
  CorruptEntryError,
  InvalidApprovalAnswerError,
  InvalidEntryError,
  NotFoundError,
  SessionBusyError,
  UnsupportedFormatError,
} from "@podkit/session-store";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { respondToError } from "../src/http/error-mapping.js";
import { HttpError } from "../src/http/http-error.js";

// The status a route's error answers with is read off the error's kind (docs/errors.md, "Kinds"),
// through the server's real error handler.
async function answer(error: unknown) {
  const unexpected: unknown[] = [];
  const app = new Hono();
  app.get("/", () => {
    throw error;
  });
  app.onError((thrown, c) => respondToError(c, thrown, (e) => unexpected.push(e)));
  const response = await app.request("/");
  return {
    status: response.status,
    body: (await response.json()) as { error: string; hint?: string },
    unexpected,
  };
}

describe("a podkit error answers with the status of its kind", () => {
  const byKind = [
    ["usage", new InvalidApprovalAnswerError("decision: expected allow or deny"), 400],
    ["not_found", new ApprovalNotFoundError({ sessionId: "s", callId: "c", pending: [] }), 404],
    [
      "conflict",
      new SessionBusyError({ sessionId: "s", segmentId: "g", expectedCount: 1, actualCount: 2 }),
      409,
    ],
    ["corrupt", new RunInputError({ runId: "r", at: "s/g:1", problem: "not a submitted entry" }), 500],
    ["transient", new ProviderError("HTTP 503", { kind: "http", status: 503, isRetryable: true }), 503],
    ["unsupported", new UnsupportedFormatError({ file: "/srv/s/g.jsonl", line: 1, version: 9 }), 501],
    ["internal", new InvalidEntryError({ kind: "turn_end", issues: "turn: expected number" }), 500],
  ] as const;

  it("covers every kind", () => {
    expect(byKind.map(([kind]) => kind)).toEqual([...ERROR_KINDS]);
  });

  it.each(byKind)("%s: %d, with the error's message and hint", async (kind, error, status) => {
    expect(error.errorKind).toBe(kind);
    const answered = await answer(error);
    expect(answered.status).toBe(status);
    expect(answered.body).toEqual(
      error.hint === undefined ? { error: error.message } : { error: error.message, hint: error.hint },
    );
  });

  it("reports a podkit error of kind internal to the server's log; no other podkit error", async () => {
    const internal = await answer(byKind[6][1]);
    expect(internal.unexpected).toEqual([byKind[6][1]]);
    for (const [, error] of byKind.slice(0, 6)) expect((await answer(error)).unexpected).toEqual([]);
  });

  it("keeps the statuses the API documents: a pod or session busy 409, a delegated call 409, a failed write 503", async () => {
    expect((await answer(new PodBusyError("a run is in progress"))).status).toBe(409);
    const delegated = new ApprovalDelegatedError({ sessionId: "s", callId: "c", childSessionId: "child" });
    expect(await answer(delegated)).toMatchObject({ status: 409, body: { error: delegated.message } });
    expect((await answer(new AppendFailedError({ file: "/srv/s/g.jsonl", detail: "ENOSPC" }))).status).toBe(
      503,
    );
  });

  it("an unknown session and a corrupt entry answer without the server's paths", async () => {
    const missing = await answer(new NotFoundError({ what: "session", id: "x", where: "/srv/sessions" }));
    expect(missing).toMatchObject({ status: 404, body: { error: "no such session: x" } });
    const corrupt = await answer(
      new CorruptEntryError({ file: "/srv/s/g.jsonl", line: 3, reason: "not JSON" }),
    );
    expect(corrupt).toMatchObject({
      status: 500,
      body: { error: "the session log has a corrupt entry (line 3): not JSON" },
    });
    expect(JSON.stringify([missing.body, corrupt.body])).not.toContain("/srv");
  });

  it("an HttpError answers with its own status", async () => {
    const error = new HttpError(413, "the body is over 1 MiB", "send less");
    expect(await answer(error)).toMatchObject({
      status: 413,
      body: { error: error.message, hint: "send less" },
    });
    expect(error.errorKind).toBe("usage");
    expect(new HttpError(503, "busy").errorKind).toBe("transient");
  });
});

describe("an error without a kind answers as before", () => {
  it("anything not podkit's is a bare 500 reported to the server's log, whatever kind it claims", async () => {
    for (const error of [
      new TypeError("x is undefined"),
      Object.assign(new Error("boom"), { errorKind: "usage" }),
    ]) {
      const answered = await answer(error);
      expect(answered).toMatchObject({
        status: 500,
        body: { error: "internal error", hint: "the server's log has the details" },
      });
      expect(answered.unexpected).toEqual([error]);
    }
  });

  it("a podkit error of a release older than the kinds is a 500 with its message", async () => {
    const older = Object.assign(new Error("from an older copy"), { [Symbol.for("podkit.pod.error")]: true });
    expect(await answer(older)).toMatchObject({
      status: 500,
      body: { error: "from an older copy" },
      unexpected: [],
    });
  });
});
