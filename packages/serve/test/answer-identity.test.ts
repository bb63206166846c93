import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { answerApproval, localAnswerer, readSessionView } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { ServeUsageError, startServer } from "../src/index.js";
import { type ServeWorld, useServeWorlds } from "./support/serve-world.js";
import { http } from "./support/sse-client.js";

const world = useServeWorlds();

const BASH = "[tools]\nbash = true\n";
const ALICE = "alice-0123456789abcdef0123";
const BOT = "bot-fedcba9876543210fedcba";
const SHARED = "shared-0123456789abcdef";
const HOLDERS = [
  { holder: "alice", token: ALICE },
  // Listed by digest: the file holding it need not hold the secret.
  { holder: "ci-bot", sha256: createHash("sha256").update(BOT).digest("hex") },
];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const bashCall = (id: string) => ({
  parts: [{ type: "tool_call" as const, id, name: "bash", arguments: { command: "echo ran >> count" } }],
});
const text = (value: string) => ({ parts: [{ type: "text" as const, text: value }] });

/** Starts a session whose bash call `callId` waits for an answer; returns its id. */
async function pendingCall(w: ServeWorld, callId: string, headers: Record<string, string> = {}) {
  w.double.enqueue(bashCall(callId));
  const started = await http(w.url("/sessions"), { json: { message: "count", wait: true }, headers });
  expect(started.body, started.text).toMatchObject({ status: "awaiting_approval" });
  return (started.body as { sessionId: string }).sessionId;
}

/** Answers over HTTP; the run the answer resumes gets its closing text. */
function answer(w: ServeWorld, sessionId: string, callId: string, json: unknown, headers = {}) {
  w.double.enqueue(text("done"));
  return http(w.url(`/sessions/${sessionId}/approvals/${callId}`), { json, headers });
}

/** The `by` of the answer the session's log holds for `callId`. */
async function recordedBy(w: ServeWorld, sessionId: string, callId: string): Promise<string | undefined> {
  const view = await readSessionView(w.store, sessionId);
  const approvals = view.segments.flatMap((segment) => segment.turns.flatMap((turn) => turn.approvals));
  return approvals.find((approval) => approval.callId === callId)?.answer?.by;
}

describe("who an answer is credited to", () => {
  it("a token names its holder: GET /identity says who, and an answer given with it is the holder's", async () => {
    const w = await world({ manifestExtra: BASH, server: { token: SHARED, tokens: HOLDERS } });
    expect((await http(w.url("/identity"), { headers: bearer(ALICE) })).body).toEqual({
      holder: "alice",
      answersRecordedAs: "alice",
    });
    expect((await http(w.url("/identity"), { headers: bearer(BOT) })).body).toEqual({
      holder: "ci-bot",
      answersRecordedAs: "ci-bot",
    });
    expect((await http(w.url("/identity"), { headers: bearer(SHARED) })).body).toEqual({
      holder: null,
      answersRecordedAs: "anonymous (shared token)",
    });

    const sessionId = await pendingCall(w, "toolu_alice", bearer(ALICE));
    const answered = await answer(
      w,
      sessionId,
      "toolu_alice",
      { decision: "deny", reason: "not today" },
      bearer(ALICE),
    );
    expect(answered.status, answered.text).toBe(202);
    expect(answered.body).toMatchObject({ by: "alice" });
    expect(await recordedBy(w, sessionId, "toolu_alice")).toBe("alice");
  });

  it("a holder cannot answer as someone else: a claimed name is kept beside the holder's", async () => {
    const w = await world({ manifestExtra: BASH, server: { tokens: HOLDERS } });
    const sessionId = await pendingCall(w, "toolu_bot", bearer(BOT));
    const answered = await answer(w, sessionId, "toolu_bot", { decision: "allow", by: "alice" }, bearer(BOT));
    expect(answered.status, answered.text).toBe(202);
    expect(answered.body).toMatchObject({ by: "alice (via ci-bot)" });
    expect(await recordedBy(w, sessionId, "toolu_bot")).toBe("alice (via ci-bot)");
  });

  it("without a token on loopback, an answer is credited to a label saying so, never to the server's OS user", async () => {
    const w = await world({ manifestExtra: BASH });
    // Positive control: what the store writes when an answer names nobody — the OS user of the
    // process — which the server used to record for a click in a browser.
    const control = await pendingCall(w, "toolu_control");
    await answerApproval(w.store, control, "toolu_control", { decision: "deny" });
    expect(await recordedBy(w, control, "toolu_control")).toBe(localAnswerer());

    expect((await http(w.url("/identity"))).body).toEqual({
      holder: null,
      answersRecordedAs: "anonymous (loopback, no token)",
    });
    const sessionId = await pendingCall(w, "toolu_anon");
    const answered = await answer(w, sessionId, "toolu_anon", { decision: "deny" });
    expect(answered.status, answered.text).toBe(202);
    const by = await recordedBy(w, sessionId, "toolu_anon");
    expect(by).toBe("anonymous (loopback, no token)");
    expect(by).not.toContain(localAnswerer());
    // Where the server can name nobody, the client's own `by` is recorded as given.
    const named = await pendingCall(w, "toolu_named");
    await answer(w, named, "toolu_named", { decision: "deny", by: "carol" });
    expect(await recordedBy(w, named, "toolu_named")).toBe("carol");
    expect(await readFile(join(w.workspace, "count"), "utf8").catch(() => "")).toBe("");
  });

  it("a missing and a wrong token get different 401s, each saying what to do", async () => {
    const w = await world({ server: { tokens: HOLDERS } });
    const missing = await http(w.url("/identity"));
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ error: "this server needs a bearer token" });
    expect((missing.body as { hint: string }).hint).toMatch(/Authorization: Bearer/);
    const wrong = await http(w.url("/identity"), { headers: bearer(`${ALICE}x`) });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: "this bearer token is not accepted here" });
    expect((wrong.body as { hint: string }).hint).toMatch(/ask whoever runs the server/);
  });

  it("refuses holders it could not tell apart or name, before listening", async () => {
    const w = await world();
    const start = (tokens: Parameters<typeof startServer>[0]["tokens"], token?: string) =>
      startServer({
        store: w.store,
        pods: { create: never, restore: never },
        host: "0.0.0.0",
        port: 0,
        tokens,
        ...(token === undefined ? {} : { token }),
      });
    const cases: [Parameters<typeof start>, RegExp][] = [
      [
        [
          [
            { holder: "alice", token: ALICE },
            { holder: "alice", token: BOT },
          ],
        ],
        /"alice" is listed twice/,
      ],
      [
        [
          [
            { holder: "alice", token: ALICE },
            { holder: "bob", token: ALICE },
          ],
        ],
        /"bob" has the same token as "alice"/,
      ],
      [[[{ holder: "alice", token: ALICE }], ALICE], /"alice" has the same token as PODKIT_SERVE_TOKEN/],
      [[[{ holder: "alice", token: "short" }]], /the token of "alice" is too short/],
      [[[{ holder: "alice", sha256: "abc" }]], /sha256 of token holder "alice" is not 64 hex digits/],
      [[[{ holder: "al ice", token: ALICE }]], /invalid token holder name "al ice"/],
    ];
    for (const [args, message] of cases) {
      const attempt = start(...args);
      await expect(attempt).rejects.toSatisfy(ServeUsageError.isInstance);
      await expect(attempt).rejects.toThrow(message);
    }
    // Named holders alone let a server listen beyond loopback.
    const open = await start([{ holder: "alice", token: ALICE }]);
    await open.close();
  });
});

async function never(): Promise<never> {
  throw new Error("no pod should be built");
}
