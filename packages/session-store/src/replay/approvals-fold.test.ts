import { describe, expect, it } from "vitest";
import type { Entry } from "../entry/entry-schema.js";
import { replay, startFold } from "./replay.js";

const START: Entry = {
  kind: "segment_start",
  ts: 1,
  v: 2,
  session_id: "s1",
  segment_id: "g1",
  system_prompt: "p",
  config: {},
  history: [],
};

const call = (id: string): Entry => ({
  kind: "assistant_item",
  ts: 3,
  item: { type: "tool_call", call_id: id, name: "bash", arguments: '{"command":"ls"}' },
});
const request = (id: string, ts = 4): Entry => ({
  kind: "approval_requested",
  ts,
  call_id: id,
  tool: "bash",
  arguments: '{"command":"ls"}',
  pod_path: ["root"],
  asked_by: "bash",
});

/** A turn that asked about two calls of one batch and ended awaiting approval. */
const AWAITING: Entry[] = [
  START,
  { kind: "invoke", ts: 2, trigger: "user" },
  { kind: "user_input", ts: 2, text: "go" },
  call("a"),
  call("b"),
  request("a"),
  request("b"),
  { kind: "run_completed", ts: 5, result: "awaiting_approval", interrupted: true },
];

describe("the approvals fold", () => {
  it("folds requests and the first answer per call; a result closes the call; a new run clears awaiting", () => {
    const answered = [
      ...AWAITING,
      { kind: "approval_answered", ts: 6, call_id: "a", decision: "deny", reason: "no", by: "ops" },
      { kind: "approval_answered", ts: 7, call_id: "a", decision: "allow", by: "late" },
      { kind: "approval_answered", ts: 7, call_id: "ghost", decision: "allow", by: "nobody" },
    ] satisfies Entry[];
    const state = replay(answered);
    expect(state.awaitingApproval).toBe(true);
    expect(state.approvals).toEqual([
      {
        callId: "a",
        tool: "bash",
        arguments: '{"command":"ls"}',
        podPath: ["root"],
        askedBy: "bash",
        requestedAt: 4,
        answer: { decision: "deny", reason: "no", by: "ops", at: 6 },
        closed: false,
      },
      {
        callId: "b",
        tool: "bash",
        arguments: '{"command":"ls"}',
        podPath: ["root"],
        askedBy: "bash",
        requestedAt: 4,
        closed: false,
      },
    ]);
    const resumed = replay([
      ...answered,
      { kind: "invoke", ts: 8, trigger: "resume" },
      {
        kind: "tool_result",
        ts: 9,
        item: { type: "tool_result", call_id: "a", summary: "denied", is_error: true },
      },
    ]);
    expect(resumed.awaitingApproval).toBe(false);
    expect(resumed.approvals.map((a) => a.closed)).toEqual([true, false]);
  });

  it("a drift fork carries the approvals of calls still open, so the fork replays to the same approvals", () => {
    const entries: Entry[] = [
      ...AWAITING,
      { kind: "approval_answered", ts: 6, call_id: "b", decision: "allow", by: "ops" },
    ];
    const fold = startFold(entries[0]);
    for (const entry of entries.slice(1)) fold.apply(entry);
    const snapshot = fold.forkSnapshot();
    const fork = replay([
      {
        ...START,
        segment_id: "g2",
        history: snapshot.history,
        forked_from: { segment_id: "g1", at_turn: 0 },
      },
      ...snapshot.carried,
    ]);
    expect(fork.approvals).toEqual(fold.state.approvals);
    expect(fork.awaitingApproval).toBe(true);
    expect(fork.history).toEqual(fold.state.history);
  });

  it("a delegated request names its child session; it is closed by its call's result, like any other", () => {
    const delegated: Entry = {
      ...(request("c") as Entry & { kind: "approval_requested" }),
      tool: "spawn_pod",
      child_session_id: "child-1",
    };
    const entries: Entry[] = [...AWAITING.slice(0, -1), call("c"), delegated, AWAITING.at(-1) as Entry];
    const state = replay(entries);
    expect(state.approvals.at(-1)).toEqual({
      callId: "c",
      tool: "spawn_pod",
      arguments: '{"command":"ls"}',
      podPath: ["root"],
      askedBy: "bash",
      childSessionId: "child-1",
      requestedAt: 4,
      closed: false,
    });
    const closed = replay([
      ...entries,
      { kind: "invoke", ts: 8, trigger: "resume" },
      { kind: "tool_result", ts: 9, item: { type: "tool_result", call_id: "c", summary: "reviewed" } },
    ]);
    expect(closed.approvals.at(-1)).toMatchObject({ childSessionId: "child-1", closed: true });
    expect(closed.approvals.at(-1)).not.toHaveProperty("answer");
    expect(state.approvals[0]).not.toHaveProperty("childSessionId");
  });
});
