import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { answerApproval } from "../src/approvals/answer-approval.js";
import type { Entry } from "../src/entry/entry-schema.js";
import { FsStore } from "../src/fs/fs-store.js";
import { SessionLog } from "../src/log/session-log.js";
import { summarizeEntries } from "../src/read/session-summary.js";
import { replay } from "../src/replay/replay.js";
import { fixtureEntryTexts, plantFixtures, V3 } from "./helpers/fixture-states.js";
import { useTempDirs } from "./helpers/temp-dir.js";

// Logs written by format v3, frozen (their exact states: helpers/fixture-states.ts; every store
// restores them in fixtures-corpus.test.ts and packages/store-postgres): approvals with a
// delegated call, a three-level sub-pod tree, dispatched runs, a budget stop.
const tempDir = useTempDirs();

const entriesOf = (name: string) => fixtureEntryTexts(name).map((text) => JSON.parse(text) as Entry);

describe("format v3 fixture corpus", () => {
  it("decisions: the read model puts a call's decision under its turn and a rejected input outside any turn", () => {
    const summary = summarizeEntries(entriesOf("v3/decisions.jsonl"));
    expect(summary.turns[0]?.decisions).toEqual([
      {
        decidedBy: "rule",
        outcome: "deny",
        callId: "toolu_01",
        tool: "bash",
        podPath: ["root"],
        rule: '[[permissions.rule]] tool = "bash" args = { command = "rm *" } action = "deny"',
        reason: "nothing is removed",
        at: 1796640000152,
      },
    ]);
    expect(summary.decisions).toEqual([
      {
        decidedBy: "guardrail",
        outcome: "reject",
        podPath: ["root"],
        rule: "acme-guards/no-keys",
        reason: "the message holds an API key",
        point: "input",
        at: 1796640000900,
      },
    ]);
  });

  it("a typed answer: the read model gives the turn its output, digest, normalisations and repairs", () => {
    const summary = summarizeEntries(entriesOf("v3/final-output.jsonl"));
    expect(summary.turns[0]?.output).toEqual({
      value: { verdict: "approve", findings: [{ line: 3 }] },
      schemaDigest: "sha256:6f1ed002ab5595859014ebf0951522d9f3c8d2e6b1a6e27f1e0c3b1b2e8f1a90",
      normalizations: ["unwrapped:output"],
      repairs: 1,
    });
    const tampered = entriesOf("v3/final-output.jsonl").map((entry) =>
      entry.kind === "extension" ? { ...entry, payload: { value: 1 } } : entry,
    );
    expect(summarizeEntries(tampered).turns[0]?.output).toBeUndefined();
  });

  it("a decision payload that is not one (the log is untrusted) is left out, never a crash", () => {
    const entries = entriesOf("v3/decisions.jsonl").map((entry) =>
      entry.kind === "extension" ? { ...entry, payload: { decided_by: "root-shell", outcome: 7 } } : entry,
    );
    const summary = summarizeEntries(entries);
    expect(summary.turns[0]?.decisions).toEqual([]);
    expect(summary.decisions).toEqual([]);
    expect(summary.turns[0]?.tools).toHaveLength(1);
  });

  it("a budget stop replays as a yielded run does: nothing in flight, resumable, interrupted as written", () => {
    const stopped = entriesOf("v3/budget-stop.jsonl");
    const asYielded = stopped.map((entry) =>
      entry.kind === "run_completed" ? { ...entry, result: "yielded" as const } : entry,
    );
    expect(replay(stopped)).toEqual(replay(asYielded));
    expect(replay(stopped)).toMatchObject({ inFlight: null, interrupted: false, awaitingApproval: false });
    const interrupted = stopped.map((entry) =>
      entry.kind === "run_completed" ? { ...entry, interrupted: true } : entry,
    );
    expect(replay(interrupted).interrupted).toBe(true);
  });

  it("a v3 session answers its pending call in place; its delegated call names the child it waits on", async () => {
    const store = new FsStore({ root: await tempDir() });
    const [ref] = (await plantFixtures(store.root, "v3/approvals.jsonl")) as [
      { sessionId: string; segmentId: string },
    ];
    const before = await readFile(store.segmentPath(ref), "utf8");
    await answerApproval(store, V3.S_APPROVALS, "toolu_04rm", { decision: "allow", by: "carol" });
    const log = await SessionLog.open(store, V3.S_APPROVALS);
    expect(log.segmentId).toBe(V3.G_APPROVALS);
    expect((await readFile(store.segmentPath(ref), "utf8")).startsWith(before)).toBe(true);
    expect(log.state.approvals.slice(-2)).toMatchObject([
      { callId: "toolu_04rm", answer: { decision: "allow", by: "carol" }, closed: false },
      { callId: "toolu_05spawn", childSessionId: V3.S_DELEGATED_CHILD, closed: false },
    ]);
    expect(log.state.approvals.slice(-1)[0]).not.toHaveProperty("answer");
    await store.close();
  });

  it("a tree of sessions: each child names its parent session, the call that spawned it and its depth", () => {
    const starts = ["tree-root", "tree-worker", "tree-reviewer"].map(
      (name) => entriesOf(`v3/${name}.jsonl`)[0] as Entry & { kind: "segment_start" },
    );
    expect(starts.map((start) => start.parent)).toEqual([
      undefined,
      { session_id: V3.S_ROOT, call_id: "call-root", role: "worker", depth: 1 },
      { session_id: V3.S_WORKER, call_id: "call-worker", role: "reviewer", depth: 2 },
    ]);
  });
});
