import { ApprovalNotPendingError } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../src/pod/approvals.js";
import { PodBusyError } from "../src/pod/errors.js";
import { caught } from "./helpers.js";
import { gate, kinds, sessionEntries, testTools, text, toolCall, usePodWorlds } from "./pod-harness.js";

// The approval flow inside one process (docs/approvals.md); approvals-process.test.ts runs it
// across processes on both stores.
const world = usePodWorlds();

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request body.
const sent = (request: any): string => JSON.stringify(request.body.messages);

/** A world whose `bash` tool (a test double of the name the builtin policy asks about) counts its runs. */
async function bashWorld(manifestExtra = "") {
  const calls: string[] = [];
  const w = await world({
    manifestExtra,
    toolPackages: [testTools({ bash: (args) => `ran ${JSON.stringify(args)}`, ping: () => "pong" }, calls)],
  });
  return { w, calls };
}

describe("approvals inside one process", () => {
  it("an approver answering at once: request, answer, then the result are in the log, in that order", async () => {
    const { w, calls } = await bashWorld();
    const seen: { request: ApprovalRequest; logged: string[] }[] = [];
    const pod = await w.pod({
      approver: async (request) => {
        // Write-ahead: the question is in the log before anyone is asked.
        seen.push({ request, logged: kinds(await sessionEntries(w.workspace)) });
        return { decision: "allow", by: "ops@desk" };
      },
    });
    w.double.enqueue(toolCall("bash", { command: "ls" }, "toolu_1"), text("listed"));
    expect(await pod.run("list")).toMatchObject({ status: "finished", text: "listed" });
    expect(calls).toEqual(["bash"]);
    expect(seen[0]?.request).toMatchObject({
      callId: "toolu_1",
      tool: "bash",
      askedBy: "bash",
      podPath: ["root"],
    });
    expect(seen[0]?.logged.at(-1)).toBe("approval_requested");
    const entries = await sessionEntries(w.workspace);
    expect(kinds(entries).slice(5, 8)).toEqual(["approval_requested", "approval_answered", "tool_result"]);
    expect(entries[6]).toMatchObject({ call_id: "toolu_1", decision: "allow", by: "ops@desk" });
    expect(pod.approvals).toMatchObject([{ callId: "toolu_1", answer: { by: "ops@desk" }, closed: true }]);
  });

  it("a pod without the tool never asks about it: the call fails as unknown and the run goes on", async () => {
    const w = await world({ toolPackages: [testTools({ ping: () => "pong" })] });
    const pod = await w.pod();
    w.double.enqueue(toolCall("bash", { command: "ls" }, "toolu_x"), text("no bash here"));
    expect(await pod.run("list")).toMatchObject({ status: "finished", text: "no bash here" });
    const entries = await sessionEntries(w.workspace);
    expect(kinds(entries)).not.toContain("approval_requested");
    expect(sent(w.double.requests[1])).toContain('unknown tool \\"bash\\"');
    // Control: a pod that has bash asks about the same call, and without an approver it waits.
    const { w: withBash } = await bashWorld();
    const asking = await withBash.pod();
    withBash.double.enqueue(toolCall("bash", { command: "ls" }, "toolu_y"));
    expect(await asking.run("list")).toMatchObject({ status: "awaiting_approval" });
  });

  it("a deny from the approver reaches the model as the call's error result, with who and why", async () => {
    const { w, calls } = await bashWorld();
    const pod = await w.pod({ approver: () => ({ decision: "deny", reason: "not on prod", by: "ops" }) });
    w.double.enqueue(toolCall("bash", { command: "rm -rf /" }), text("ok, not running it"));
    await pod.run("clean up");
    expect(calls).toEqual([]);
    expect(sent(w.double.requests[1])).toContain("bash call denied by ops: not on prod");
  });

  it("without an approver the run ends awaiting_approval; answered here, resume runs the call once", async () => {
    const { w, calls } = await bashWorld();
    const pod = await w.pod();
    w.double.enqueue(toolCall("bash", { command: "make" }, "toolu_m"));
    expect((await pod.run("build")).status).toBe("awaiting_approval");
    expect(pod.awaitingApproval).toBe(true);
    expect(pod.pendingApprovals.map((a) => a.callId)).toEqual(["toolu_m"]);
    expect(kinds(await sessionEntries(w.workspace)).slice(-2)).toEqual([
      "approval_requested",
      "run_completed",
    ]);

    // An unfinished batch: resume without an answer ends the same way and writes no new request.
    const before = (await sessionEntries(w.workspace)).length;
    expect((await pod.resume()).status).toBe("awaiting_approval");
    const again = await sessionEntries(w.workspace);
    expect(kinds(again.slice(before))).toEqual(["invoke", "run_completed"]);
    expect(again.filter((e) => e.kind === "approval_requested")).toHaveLength(1);

    await pod.answerApproval("toolu_m", { decision: "allow", by: "me" });
    w.double.enqueue(text("built"));
    expect(await pod.resume()).toMatchObject({ status: "finished", text: "built" });
    expect(calls).toEqual(["bash"]);
    expect(pod.awaitingApproval).toBe(false);
  });

  it("a hook that asks names itself; autoApprove turns off the builtin policy but hooks still ask", async () => {
    const { w, calls } = await bashWorld();
    const pod = await w.pod({ autoApprove: true });
    pod.addHooks({
      preToolCall: (call) =>
        call.name === "ping"
          ? { action: "ask", askedBy: "ping-guard", reason: "pings are loud" }
          : { action: "continue" },
    });
    w.double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_b", name: "bash", arguments: {} },
          { type: "tool_call", id: "toolu_p", name: "ping", arguments: {} },
        ],
      },
      text("done"),
    );
    expect((await pod.run("go")).status).toBe("awaiting_approval");
    expect(calls).toEqual([]);
    expect(pod.pendingApprovals).toMatchObject([
      { callId: "toolu_p", askedBy: "ping-guard", reason: "pings are loud" },
    ]);
    await pod.answerApproval("toolu_p", { decision: "deny" });
    await pod.resume();
    expect(calls).toEqual(["bash"]);
    expect(sent(w.double.requests[1])).toMatch(/ping call denied by \S+/);
  });

  it("a new run instead of resume closes the pending call; answering it then is ApprovalNotPendingError", async () => {
    const { w, calls } = await bashWorld();
    const pod = await w.pod();
    w.double.enqueue(toolCall("bash", {}, "toolu_x"));
    await pod.run("first");
    w.double.enqueue(text("moved on"));
    await pod.run("never mind");
    expect(calls).toEqual([]);
    const error = await caught(pod.answerApproval("toolu_x", { decision: "allow" }));
    expect(ApprovalNotPendingError.isInstance(error)).toBe(true);
    expect(pod.pendingApprovals).toEqual([]);
  });

  it("a pod whose view went stale answers through a fresh read and continues from it", async () => {
    const { w, calls } = await bashWorld();
    const first = await w.pod();
    w.double.enqueue({
      parts: [
        { type: "tool_call", id: "toolu_1", name: "bash", arguments: { n: 1 } },
        { type: "tool_call", id: "toolu_2", name: "bash", arguments: { n: 2 } },
      ],
    });
    await first.run("two calls");
    const sessionId = first.sessionId as string;
    await first.close();
    const a = await w.restore(sessionId);
    const b = await w.restore(sessionId);
    await a.answerApproval("toolu_1", { decision: "allow", by: "a" });
    // b read the log before a's answer: its answer still lands in the same segment, after a's.
    await b.answerApproval("toolu_2", { decision: "allow", by: "b" });
    expect(b.approvals.map((x) => x.answer?.by)).toEqual(["a", "b"]);
    w.double.enqueue(text("both ran"));
    expect(await b.resume()).toMatchObject({ status: "finished", text: "both ran" });
    expect(calls).toEqual(["bash", "bash"]);
    const entries = await sessionEntries(w.workspace);
    expect(entries.filter((e) => e.kind === "approval_answered").map((e) => e.by)).toEqual(["a", "b"]);
  });

  it("answerApproval while a run is in progress is PodBusyError", async () => {
    const slow = gate();
    const w = await world({ toolPackages: [testTools({ slow: slow.run })] });
    const pod = await w.pod();
    w.double.enqueue(toolCall("slow"), text("done"));
    const running = pod.run("go");
    await slow.running;
    expect(
      PodBusyError.isInstance(await caught(pod.answerApproval("toolu_any", { decision: "allow" }))),
    ).toBe(true);
    slow.release();
    await running;
  });
});
