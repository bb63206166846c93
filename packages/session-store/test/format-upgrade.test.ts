import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { answerApproval } from "../src/approvals/answer-approval.js";
import type { Entry, EntryInput } from "../src/entry/entry-schema.js";
import { SessionStoreUsageError } from "../src/errors.js";
import { FsStore } from "../src/fs/fs-store.js";
import { type DriftFork, restoreSession, SessionLog } from "../src/log/session-log.js";
import { replay } from "../src/replay/replay.js";
import type { SessionState } from "../src/replay/session-state.js";
import { plantFixtures, V1 } from "./helpers/fixture-states.js";
import { useTempDirs } from "./helpers/temp-dir.js";

// A writer never puts an entry into a segment whose format version lacks it (docs/session-store.md,
// "Format versions"): it continues in a fork of the current version first, and the previous
// release keeps reading every segment it could read before.
const tempDir = useTempDirs();
// After every fixture entry and before the clock of any run of these tests (the head rule compares `ts`).
const TS = 1_796_100_000_000;

/** The fixture `name` in a fresh store, the log open on it, the drift forks it reports, its file's text. */
async function opened(name: string) {
  const store = new FsStore({ root: await tempDir() });
  const [ref] = (await plantFixtures(store.root, name)) as [{ sessionId: string; segmentId: string }];
  const drifts: DriftFork[] = [];
  const options = { onDriftFork: (fork: DriftFork) => drifts.push(fork) };
  const log = await SessionLog.openSegment(store, ref, options);
  const source = await readFile(store.segmentPath(ref), "utf8");
  const entries: Entry[] = [];
  for await (const entry of store.readAll(ref)) entries.push(entry);
  return { store, ref, log, drifts, source, entries, options };
}

/** The stored entries of a segment. */
async function entriesOf(store: FsStore, ref: { sessionId: string; segmentId: string }) {
  const entries: Entry[] = [];
  for await (const entry of store.readAll(ref)) entries.push(entry);
  return entries;
}

/** A state without what names its place (segment, version, lineage, indices). */
function placeless(state: Readonly<SessionState>) {
  const { segmentId, formatVersion, lineage, entryCount, inFlight, ...rest } = state;
  return { ...rest, inFlightTrigger: inFlight?.trigger ?? null };
}

/** Appended entries, stamped `TS`, `TS + 1`, … (so the test knows what replay would fold). */
const withTs = (inputs: EntryInput[]): Exclude<Entry, { kind: "segment_start" }>[] =>
  inputs.map((input, i) => ({ ts: TS + i, ...input }) as Exclude<Entry, { kind: "segment_start" }>);

describe("appending an entry the segment's format version does not include", () => {
  it("a v1 segment continues in a v3 fork: same session, forked_from lineage, same prompt and history, the open turn carried", async () => {
    // v1/interrupted.jsonl ends with a turn in flight; the cap stops it (format v3 only).
    const { store, ref, log, drifts, source, entries } = await opened("v1/interrupted.jsonl");
    const inputs: EntryInput[] = [
      {
        kind: "extension",
        domain: "budget",
        payload: { cap: "run_tokens", limit: 900, spent: 918, estimate: 40 },
      },
      { kind: "run_completed", result: "budget_exhausted", interrupted: false },
    ];
    const result = await log.appendMany(withTs(inputs));

    expect(await readFile(store.segmentPath(ref), "utf8")).toBe(source); // the v1 file is untouched
    expect(log.segmentId).not.toBe(ref.segmentId);
    expect(result).toEqual({ segmentId: log.segmentId, index: log.entryCount - 2, driftFork: null });
    expect(drifts).toEqual([]); // not a drift: nobody else wrote
    const fork = await entriesOf(store, log.ref);
    const start = fork[0] as Entry & { kind: "segment_start" };
    const original = entries[0] as Entry & { kind: "segment_start" };
    expect(start).toMatchObject({
      v: 3,
      session_id: V1.S_INT,
      forked_from: { segment_id: V1.G_INT, at_turn: 0 },
      system_prompt: original.system_prompt,
    });
    // The open turn's entries come over verbatim (the history before it sits in segment_start).
    const openTurn = entries.slice(5);
    expect(fork.slice(-2 - openTurn.length, -2)).toEqual(openTurn);
    expect(fork.slice(-2)).toEqual(withTs(inputs));

    // Replay of the fork is what replay of the v1 segment with the entries would have been.
    const wouldHaveBeen = replay([...entries, ...withTs(inputs)]);
    expect(placeless(log.state)).toEqual(placeless(wouldHaveBeen));
    expect(log.state).toMatchObject({
      sessionId: V1.S_INT,
      formatVersion: 3,
      interrupted: false,
      inFlight: null,
      lineage: { forkedFrom: { segmentId: V1.G_INT, atTurn: 0 }, compactedFrom: null },
    });
    expect(JSON.stringify(log.state.history)).toBe(JSON.stringify(wouldHaveBeen.history));
    // The session now restores from the fork, to the writer's state.
    expect(await restoreSession(store, ref.sessionId)).toEqual(log.state);
    await store.close();
  });

  it("a v2 segment without approvals continues in a v3 fork before its first approval; a turn in flight stays rollbackable", async () => {
    // v2/annotated-fork.jsonl holds a user turn in flight.
    const { store, ref, log, source, entries } = await opened("v2/annotated-fork.jsonl");
    const inputs: EntryInput[] = [
      { kind: "assistant_item", item: { type: "tool_call", call_id: "c1", name: "bash", arguments: "{}" } },
      {
        kind: "approval_requested",
        call_id: "c1",
        tool: "bash",
        arguments: "{}",
        pod_path: ["root"],
        asked_by: "bash",
      },
      { kind: "run_completed", result: "awaiting_approval", interrupted: true },
    ];
    // The tool call is in every format: it goes into the v2 segment; the request forks.
    await log.append(withTs(inputs)[0] as EntryInput);
    expect(log.segmentId).toBe(ref.segmentId);
    const afterCall = await readFile(store.segmentPath(ref), "utf8");
    await log.appendMany(withTs(inputs).slice(1));
    expect(await readFile(store.segmentPath(ref), "utf8")).toBe(afterCall);
    expect(afterCall.startsWith(source)).toBe(true);
    expect(log.state.formatVersion).toBe(3);
    expect(placeless(log.state)).toEqual(placeless(replay([...entries, ...withTs(inputs)])));
    expect(log.state).toMatchObject({ awaitingApproval: true, approvals: [{ callId: "c1", closed: false }] });

    // An answer from another process lands in the fork, exactly once.
    const { approval } = await answerApproval(store, ref.sessionId, "c1", { decision: "allow", by: "ops" });
    expect(approval.answer).toMatchObject({ decision: "allow", by: "ops" });
    const reopened = await SessionLog.open(store, ref.sessionId);
    expect(reopened.segmentId).toBe(log.segmentId);
    await store.close();
  });

  it("rolls back the carried open turn in the fork", async () => {
    const { store, log, entries } = await opened("v2/annotated-fork.jsonl");
    const before = replay(entries);
    await log.append({
      kind: "approval_requested",
      call_id: "c9",
      tool: "bash",
      arguments: "{}",
      pod_path: ["root"],
      asked_by: "bash",
    });
    expect(log.state.formatVersion).toBe(3);
    const inFlight = log.state.inFlight as NonNullable<SessionState["inFlight"]>;
    expect((await entriesOf(store, log.ref))[inFlight.entryIndex]).toMatchObject({
      kind: "invoke",
      trigger: "user",
    });
    await log.truncate(inFlight.entryIndex);
    expect(log.state.history).toEqual(before.history.slice(0, -1)); // the turn's user input is gone
    expect(log.state).toMatchObject({ inFlight: null, approvals: [] });
    await store.close();
  });

  it("group commit: appends queued together move to the fork together, in order", async () => {
    const { store, ref, log, entries } = await opened("v2/plain.jsonl");
    const inputs = withTs([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "go" },
      {
        kind: "extension",
        domain: "budget",
        payload: { cap: "session_tokens", limit: 1, spent: 1, estimate: 1 },
      },
      { kind: "run_completed", result: "budget_exhausted", interrupted: false },
    ]);
    const results = await Promise.all(inputs.map((input) => log.append(input as EntryInput)));
    // The first went out alone into the v2 segment; the three queued behind it shared the fork.
    expect(log.segmentId).not.toBe(ref.segmentId);
    expect(results.map((result) => result.segmentId)).toEqual([
      ref.segmentId,
      log.segmentId,
      log.segmentId,
      log.segmentId,
    ]);
    expect(placeless(log.state)).toEqual(placeless(replay([...entries, ...inputs])));
    await store.close();
  });

  it("a claim that cannot land in the segment's version is refused, nothing written", async () => {
    const { store, ref, log, source } = await opened("v2/plain.jsonl");
    const refused = await log
      .append(
        { kind: "run_completed", result: "budget_exhausted", interrupted: false },
        { ifUnchanged: true },
      )
      .catch((error: unknown) => error);
    expect(SessionStoreUsageError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/format v2, which cannot hold this "run_completed" entry/);
    expect(await readFile(store.segmentPath(ref), "utf8")).toBe(source);
    expect(await store.listSegments(ref.sessionId)).toEqual([ref.segmentId]);
    await store.close();
  });

  it("a new segment (create, fork, compaction) is v3 from the start", async () => {
    const { store, log } = await opened("v1/plain.jsonl");
    const compacted = await log.createCompactedSegment({ history: [] });
    const forked = await SessionLog.fork(store, log.sessionId);
    const created = await SessionLog.create(store, { systemPrompt: null, config: {} });
    for (const next of [compacted, forked, created]) expect(next.state.formatVersion).toBe(3);
    await store.close();
  });
});

describe("v1 and v2 segments main wrote with approvals keep taking them in their own version", () => {
  it("answers, resumes and new requests land in the v2 segment as they always did, framed v2 lines", async () => {
    const { store, ref, log, source, drifts } = await opened("v2/approvals.jsonl");
    const { approval } = await answerApproval(store, ref.sessionId, "toolu_04rm", {
      decision: "deny",
      by: "bob",
    });
    expect(approval.answer).toMatchObject({ decision: "deny", by: "bob" });
    const again = await SessionLog.open(store, ref.sessionId);
    expect(again.segmentId).toBe(ref.segmentId);
    await again.appendMany([
      { kind: "invoke", trigger: "resume" },
      {
        kind: "tool_result",
        item: { type: "tool_result", call_id: "toolu_04rm", summary: "denied", is_error: true },
      },
      {
        kind: "assistant_item",
        item: { type: "tool_call", call_id: "toolu_06", name: "bash", arguments: "{}" },
      },
      {
        kind: "approval_requested",
        call_id: "toolu_06",
        tool: "bash",
        arguments: "{}",
        pod_path: ["root"],
        asked_by: "bash",
      },
      { kind: "run_completed", result: "awaiting_approval", interrupted: true },
    ]);
    expect(again.segmentId).toBe(ref.segmentId);
    expect(await store.listSegments(ref.sessionId)).toEqual([ref.segmentId]);
    const text = await readFile(store.segmentPath(ref), "utf8");
    expect(text.startsWith(source)).toBe(true);
    const added = text.slice(source.length).trimEnd().split("\n");
    expect(added).toHaveLength(6);
    for (const [i, line] of added.entries())
      expect(line).toMatch(new RegExp(`,"seq":${45 + i},"crc":"[0-9a-f]{8}"}$`));
    expect(drifts).toEqual([]);
    expect(log.state.formatVersion).toBe(2);
    await store.close();
  });

  it("but a delegated request or a budget stop, which main never wrote, continues in a v3 fork", async () => {
    for (const input of [
      {
        kind: "approval_requested",
        call_id: "toolu_07",
        tool: "spawn_pod",
        arguments: "{}",
        pod_path: ["root"],
        asked_by: "subpod",
        child_session_id: "child-session",
      },
      { kind: "run_completed", result: "budget_exhausted", interrupted: false },
    ] satisfies EntryInput[]) {
      const { store, ref, log, source, entries } = await opened("v2/approvals.jsonl");
      await log.append({ ts: TS, ...input });
      expect(await readFile(store.segmentPath(ref), "utf8")).toBe(source);
      expect(log.state.formatVersion).toBe(3);
      // The pending request (its call still without a result) comes along; closed ones stay behind.
      const { approvals: forked, ...forkState } = placeless(log.state);
      const { approvals: all, ...wouldHaveBeen } = placeless(
        replay([...entries, { ts: TS, ...input } as Entry]),
      );
      expect(forkState).toEqual(wouldHaveBeen);
      expect(forked).toEqual(all.filter((record) => !record.closed));
      await store.close();
    }
  });

  it("a v2 segment holding no approval entry does not take one: even an answer continues in a v3 fork", async () => {
    const { store, ref, log, source } = await opened("v2/plain.jsonl");
    await log.append({ kind: "approval_answered", call_id: "nobody-asked", decision: "allow", by: "x" });
    expect(await readFile(store.segmentPath(ref), "utf8")).toBe(source);
    expect(log.state.formatVersion).toBe(3);
    await store.close();
  });
});
