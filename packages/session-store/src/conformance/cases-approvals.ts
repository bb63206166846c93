import assert from "node:assert/strict";
import { answerApproval } from "../approvals/answer-approval.js";
import {
  ApprovalAlreadyAnsweredError,
  ApprovalNotFoundError,
  ApprovalNotPendingError,
  InvalidApprovalAnswerError,
} from "../approvals/approval-errors.js";
import { listApprovals } from "../approvals/list-approvals.js";
import type { MinimalItem } from "../entry/entry-schema.js";
import { NotFoundError, SessionBusyError } from "../errors.js";
import { SessionLog } from "../log/session-log.js";
import type { CaseContext } from "./harness.js";
import { readEntries, refOf } from "./helpers.js";

/** A run that asked about three calls of one batch and ended awaiting approval. */
async function awaitingSession(store: Parameters<typeof SessionLog.create<MinimalItem>>[0]) {
  const log = await SessionLog.create(store, { systemPrompt: "approvals", config: {} });
  const calls = ["call_a", "call_b", "call_c"];
  await log.appendMany([
    { kind: "invoke", trigger: "user" },
    { kind: "user_input", text: "go" },
    ...calls.map((call_id) => ({
      kind: "assistant_item" as const,
      item: { type: "tool_call", call_id, name: "bash", arguments: "{}" },
    })),
    ...calls.map((call_id) => ({
      kind: "approval_requested" as const,
      call_id,
      tool: "bash",
      arguments: "{}",
      pod_path: ["root"],
      asked_by: "bash",
    })),
    { kind: "run_completed", result: "awaiting_approval", interrupted: true },
  ]);
  return log;
}

/** Approvals: answered from any store instance, exactly once, bad answers write nothing. */
export function approvalCases({ it }: CaseContext): void {
  it("an approval answered from another store instance is in the log with who and when; the listing follows", async (harness) => {
    const log = await awaitingSession(harness.store);
    const listed = await listApprovals(harness.openSecond(), { pendingOnly: true });
    assert.deepEqual(
      listed.sessions.map((s) => [s.sessionId, s.awaitingApproval, s.approvals.map((a) => a.callId)]),
      [[log.sessionId, true, ["call_a", "call_b", "call_c"]]],
    );
    const { approval } = await answerApproval(harness.openSecond(), log.sessionId, "call_b", {
      decision: "deny",
      reason: "not now",
      by: "ops",
    });
    assert.equal(approval.answer?.by, "ops");
    const reopened = await SessionLog.open(harness.store, log.sessionId);
    const b = reopened.state.approvals.find((a) => a.callId === "call_b");
    assert.deepEqual({ ...b?.answer, at: 0 }, { decision: "deny", reason: "not now", by: "ops", at: 0 });
    assert.equal(reopened.state.awaitingApproval, true);
    const pending = await listApprovals(harness.store, { pendingOnly: true });
    assert.deepEqual(
      pending.sessions[0]?.approvals.map((a) => a.callId),
      ["call_a", "call_c"],
    );
  });

  it("two answerers racing on one call: exactly one answer is recorded, the other is told by whom", async (harness) => {
    const log = await awaitingSession(harness.store);
    const stores = [harness.store, harness.openSecond()];
    const outcomes = await Promise.allSettled(
      stores.map((store, i) =>
        answerApproval(store, log.sessionId, "call_a", { decision: "allow", by: `answerer-${i}` }),
      ),
    );
    const won = outcomes.filter((o) => o.status === "fulfilled");
    const lost = outcomes.filter((o) => o.status === "rejected");
    assert.equal(won.length, 1, "exactly one answer wins");
    const error = (lost[0] as PromiseRejectedResult).reason;
    assert.ok(ApprovalAlreadyAnsweredError.isInstance(error), String(error));
    const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof answerApproval>>>).value;
    assert.equal(error.by, winner.approval.answer?.by);
    const entries = await readEntries(harness.store, refOf(log));
    assert.equal(entries.filter((e) => e.kind === "approval_answered").length, 1);
    assert.equal(entries.length, new Set(entries.map((e) => e.ts + e.kind + JSON.stringify(e))).size);
    assert.deepEqual((await harness.store.listSegments(log.sessionId)).length, 1, "nobody forked");
  });

  it("positive control: two writers appending answers without the claim both succeed, one in a drift fork", async (harness) => {
    const log = await awaitingSession(harness.store);
    const writers = [
      await SessionLog.open(harness.store, log.sessionId),
      await SessionLog.open(harness.openSecond(), log.sessionId),
    ];
    await Promise.all(
      writers.map((writer, i) =>
        writer.append({ kind: "approval_answered", call_id: "call_a", decision: "allow", by: `w${i}` }),
      ),
    );
    // Both believe they answered: what the conditional, never-forking answer prevents.
    assert.deepEqual(
      writers.map((writer) => writer.state.approvals[0]?.answer?.by),
      ["w0", "w1"],
    );
    assert.equal((await harness.store.listSegments(log.sessionId)).length, 2);
  });

  it("answers to different calls of one batch from racing store instances are all recorded", async (harness) => {
    const log = await awaitingSession(harness.store);
    await Promise.all(
      ["call_a", "call_b", "call_c"].map((callId, i) =>
        answerApproval(i % 2 === 0 ? harness.store : harness.openSecond(), log.sessionId, callId, {
          decision: "allow",
          by: callId,
        }),
      ),
    );
    const reopened = await SessionLog.open(harness.store, log.sessionId);
    assert.deepEqual(
      reopened.state.approvals.map((a) => a.answer?.by),
      ["call_a", "call_b", "call_c"],
    );
    assert.equal((await harness.store.listSegments(log.sessionId)).length, 1);
  });

  it("bad input gets one typed error each and writes nothing", async (harness) => {
    const log = await awaitingSession(harness.store);
    await log.append({
      kind: "tool_result",
      item: { type: "tool_result", call_id: "call_c", summary: "closed", is_error: true },
    });
    const before = await harness.store.entryCount(refOf(log));
    const answer = (sessionId: string, callId: string, input: unknown) => () =>
      answerApproval(harness.store, sessionId, callId, input);
    const attempts: [() => Promise<unknown>, (e: unknown) => boolean][] = [
      [answer("no-such-session", "call_a", { decision: "allow" }), NotFoundError.isInstance],
      [answer(log.sessionId, "call_zz", { decision: "allow" }), ApprovalNotFoundError.isInstance],
      [answer(log.sessionId, "call_c", { decision: "allow" }), ApprovalNotPendingError.isInstance],
      [answer(log.sessionId, "call_a", { decision: "yes" }), InvalidApprovalAnswerError.isInstance],
      [answer(log.sessionId, "call_a", "allow"), InvalidApprovalAnswerError.isInstance],
      [
        answer(log.sessionId, "call_a", { decision: "allow", extra: 1 }),
        InvalidApprovalAnswerError.isInstance,
      ],
    ];
    for (const [attempt, is] of attempts) {
      await assert.rejects(attempt(), (error) => is(error));
    }
    assert.equal(await harness.store.entryCount(refOf(log)), before);
  });

  it("a write that must not fork fails with SessionBusyError when another writer came first", async (harness) => {
    const log = await awaitingSession(harness.store);
    const other = await SessionLog.open(harness.openSecond(), log.sessionId);
    await other.append({ kind: "invoke", trigger: "resume" }, { ifUnchanged: true });
    const count = await harness.store.entryCount(refOf(log));
    await assert.rejects(log.append({ kind: "invoke", trigger: "resume" }, { ifUnchanged: true }), (error) =>
      SessionBusyError.isInstance(error),
    );
    assert.equal(await harness.store.entryCount(refOf(log)), count);
    assert.equal((await harness.store.listSegments(log.sessionId)).length, 1);
  });
}
