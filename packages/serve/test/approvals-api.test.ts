import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { listApprovals } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { useServeWorlds } from "./support/serve-world.js";
import { entriesOf, http, openSse } from "./support/sse-client.js";

const world = useServeWorlds();

// A served pod has no one at a terminal: a bash call (the builtin policy asks about it) stays
// pending in the log, and the run ends awaiting_approval until the API answers it.
// bash runs in the OS sandbox (docs/sandbox.md): it writes `count` because the scope lets it.
const BASH = '[[scope.allow]]\ntarget = ".."\npermission = "write"\n[tools]\nbash = true\n';
const bashCall = (id: string) => ({
  parts: [{ type: "tool_call" as const, id, name: "bash", arguments: { command: "echo ran >> count" } }],
});
const text = (value: string) => ({ parts: [{ type: "text" as const, text: value }] });

/** Lines the bash command appended to `count`: how many times the call really ran. */
async function runs(workspace: string): Promise<number> {
  const content = await readFile(join(workspace, "count"), "utf8").catch(() => "");
  return content.split("\n").filter(Boolean).length;
}

describe("approvals over HTTP", () => {
  it("a run stops awaiting approval; an allow is recorded with who, the run goes on and the call runs once", async () => {
    const w = await world({ manifestExtra: BASH });
    w.double.enqueue(bashCall("toolu_ask"), text("counted"));
    const started = await http(w.url("/sessions"), { json: { message: "count", wait: true } });
    expect(started.status, started.text).toBe(200);
    const { sessionId, status } = started.body as { sessionId: string; status: string };
    expect(status).toBe("awaiting_approval");
    expect(await runs(w.workspace)).toBe(0);
    const listing = await listApprovals(w.store, { pendingOnly: true });
    expect(listing.sessions.flatMap((s) => s.approvals.map((a) => a.callId))).toEqual(["toolu_ask"]);

    const stream = await openSse(w.url(`/sessions/${sessionId}/events`));
    const answered = await http(w.url(`/sessions/${sessionId}/approvals/toolu_ask`), {
      json: { decision: "allow", by: "alice" },
    });
    expect(answered.status, answered.text).toBe(202);
    expect(answered.body).toMatchObject({ decision: "allow", by: "alice", pending: 0, resumed: true });
    await stream.waitFor(
      (_, all) => entriesOf(all).filter((e) => e.entry.kind === "run_completed").length === 2,
    );
    stream.close();

    expect(await runs(w.workspace)).toBe(1);
    const kinds = entriesOf(stream.events).map((e) => e.entry.kind);
    expect(kinds.indexOf("approval_answered")).toBeGreaterThan(kinds.indexOf("approval_requested"));
    expect(kinds.lastIndexOf("tool_result")).toBeGreaterThan(kinds.indexOf("approval_answered"));
    // The model saw the call's result in the request after the answer.
    expect(JSON.stringify(w.double.requests.at(-1)?.body)).toContain("toolu_ask");

    // A second answer is refused, naming who answered; nothing more is written.
    const again = await http(w.url(`/sessions/${sessionId}/approvals/toolu_ask`), {
      json: { decision: "deny" },
    });
    expect(again.status, again.text).toBe(409);
    expect(again.text).toContain("alice");
    expect(await runs(w.workspace)).toBe(1);
  });

  it("a deny reaches the model as the call's error result with the reason; the call never runs", async () => {
    const w = await world({ manifestExtra: BASH });
    w.double.enqueue(bashCall("toolu_no"), text("understood"));
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "count", wait: true } }))
      .body as {
      sessionId: string;
    };
    const stream = await openSse(w.url(`/sessions/${sessionId}/events`));
    const answered = await http(w.url(`/sessions/${sessionId}/approvals/toolu_no`), {
      json: { decision: "deny", reason: "not on this machine", by: "ops" },
    });
    expect(answered.status, answered.text).toBe(202);
    await stream.waitFor(
      (_, all) => entriesOf(all).filter((e) => e.entry.kind === "run_completed").length === 2,
    );
    stream.close();
    expect(await runs(w.workspace)).toBe(0);
    expect(JSON.stringify(w.double.requests.at(-1)?.body)).toContain("not on this machine");
  });

  it("bad input is a 4xx naming the problem, and nothing is written", async () => {
    const w = await world({ manifestExtra: BASH });
    w.double.enqueue(bashCall("toolu_bad"));
    const { sessionId } = (await http(w.url("/sessions"), { json: { message: "count", wait: true } }))
      .body as {
      sessionId: string;
    };
    const before = await w.store.entryCount({
      sessionId,
      segmentId: (await w.store.listSegments(sessionId))[0] as string,
    });
    const answer = (path: string, json: unknown) => http(w.url(path), { json });
    const malformed = await answer(`/sessions/${sessionId}/approvals/toolu_bad`, { decision: "maybe" });
    expect(malformed.status, malformed.text).toBe(400);
    expect(malformed.text).toContain("allow");
    const unknownCall = await answer(`/sessions/${sessionId}/approvals/toolu_other`, { decision: "allow" });
    expect(unknownCall.status, unknownCall.text).toBe(404);
    const badCallId = await answer(`/sessions/${sessionId}/approvals/..%2Fetc`, { decision: "allow" });
    expect(badCallId.status, badCallId.text).toBe(400);
    // An id of the shape other providers use is looked up (and is unknown here), not refused.
    const otherShape = await answer(`/sessions/${sessionId}/approvals/functions.lookup:0`, {
      decision: "allow",
    });
    expect(otherShape.status, otherShape.text).toBe(404);
    const unknownSession = await answer(
      "/sessions/01900000-0000-7000-8000-000000000000/approvals/toolu_bad",
      {
        decision: "allow",
      },
    );
    expect(unknownSession.status, unknownSession.text).toBe(404);
    const segmentId = (await w.store.listSegments(sessionId))[0] as string;
    expect(await w.store.entryCount({ sessionId, segmentId })).toBe(before);
    expect(await runs(w.workspace)).toBe(0);
  });
});
