import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { Entry, MinimalItem } from "../src/entry/entry-schema.js";
import { FsStore } from "../src/fs/fs-store.js";
import { applyHeadRule, describeSession } from "../src/log/session-head.js";
import type { AppendResult } from "../src/log/session-log.js";
import { SessionLog } from "../src/log/session-log.js";
import type { SegmentSummary } from "../src/store/store.js";
import { type Child, spawnChild } from "./helpers/children.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();

/** Texts of the user messages of a history. */
function userTexts(history: readonly Record<string, unknown>[]): string[] {
  return history
    .filter((item) => item.role === "user")
    .map((item) => (item.content as { text: string }[])[0]?.text as string);
}

/** Waits until the wall clock has passed the newest `ts` in a segment file, so later entries are strictly newer. */
async function clockPast(path: string): Promise<void> {
  const newest = Math.max(
    ...(await readFile(path, "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as { ts: number }).ts),
  );
  while (Date.now() <= newest) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe("the session head (two real writers)", () => {
  it("restore continues the branch written last and lists the other one, whichever writer that is", {
    timeout: 60_000,
  }, async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const log = await SessionLog.create(store, { systemPrompt: "race", config: {} });
    await log.append({ kind: "invoke", trigger: "user" });
    await log.append({ kind: "user_input", text: "before the race" });
    await log.append({ kind: "turn_end", turn: 1 });
    await log.append({ kind: "run_completed", result: "finished", interrupted: false });
    await store.close();
    const source = log.segmentId;
    const writers: Child[] = ["red", "blue"].map(() =>
      spawnChild("command-child.mjs", [root, log.sessionId]),
    );
    try {
      for (const writer of writers) expect(await writer.next()).toBe("ready");
      for (const writer of writers) expect(await writer.ask(`open ${source}`)).toEqual({ opened: source });

      // The race: both append at once; one keeps the segment, the other drifts into a fork.
      for (const [i, writer] of writers.entries()) writer.send(`append racer-${i}`);
      const results = (await Promise.all(
        writers.map(async (w) => JSON.parse(await w.next())),
      )) as AppendResult[];
      const winnerAt = results.findIndex((result) => result.driftFork === null);
      expect(results.filter((result) => result.driftFork !== null)).toHaveLength(1);
      const winner = writers[winnerAt] as Child;
      const loser = writers[1 - winnerAt] as Child;
      const fork = (results[1 - winnerAt] as AppendResult).segmentId;
      expect(fork).not.toBe(source);
      // Positive control: by id the fork is the newest segment, so "restore the newest segment"
      // would continue the loser's fork and hide everything the winner writes next.
      expect((await store.listSegments(log.sessionId))[0]).toBe(fork);

      // The winner keeps writing the original segment after the fork exists.
      await clockPast(store.segmentPath({ sessionId: log.sessionId, segmentId: fork }));
      for (const n of [1, 2]) {
        expect(await winner.ask(`append winner-later-${n}`)).toMatchObject({
          segmentId: source,
          driftFork: null,
        });
      }
      const first = await SessionLog.open(new FsStore({ root }), log.sessionId);
      expect(first.segmentId).toBe(source);
      expect(userTexts(first.state.history).slice(-2)).toEqual(["winner-later-1", "winner-later-2"]);
      expect(first.otherBranches).toEqual([
        expect.objectContaining({
          segmentId: fork,
          role: "branch",
          forkedFrom: { segmentId: source, atTurn: 1 },
        }),
      ]);

      // Then the loser continues its fork: now that is the branch written last.
      await clockPast(store.segmentPath(log.ref));
      expect(await loser.ask("append loser-later")).toMatchObject({ segmentId: fork, driftFork: null });
      const second = await SessionLog.open(new FsStore({ root }), log.sessionId);
      expect(second.segmentId).toBe(fork);
      expect(userTexts(second.state.history).at(-1)).toBe("loser-later");
      expect(second.otherBranches.map((branch) => [branch.segmentId, branch.role])).toEqual([
        [source, "branch"],
      ]);
      const overview = await describeSession(new FsStore({ root }), log.sessionId);
      expect(overview.head).toMatchObject({ segmentId: fork, role: "head" });
      expect(overview.head.lastEntryAt).toBeGreaterThan(overview.otherBranches[0]?.lastEntryAt as number);
    } finally {
      for (const writer of writers) writer.send("exit");
      await Promise.all(writers.map((writer) => writer.exited));
    }
  });
});

/** Text of the last assistant message of a history. */
function lastAnswer(history: readonly Record<string, unknown>[]): string | undefined {
  const answer = history.filter((item) => item.role === "assistant").at(-1);
  return (answer?.content as { text: string }[] | undefined)?.[0]?.text;
}

const answer = (text: string) => ({
  kind: "assistant_item" as const,
  item: { type: "message", role: "assistant", content: [{ type: "text", text }] },
});

/** Every segment's summary, as `describeSession` reads them. */
async function summariesOf(store: FsStore, sessionId: string) {
  const summaries = new Map<string, SegmentSummary<MinimalItem>>();
  for (const segmentId of await store.listSegments(sessionId))
    summaries.set(segmentId, await store.describeSegment({ sessionId, segmentId }));
  return summaries;
}

describe("the session head: what the log says happened, not which write was last", () => {
  it("a stale writer's tool-free fork never becomes the head over the branch that completed the run", async () => {
    const store = new FsStore({ root: await tempDir() });
    // One wall clock for both writers, as on one host.
    let clock = 1_000;
    const options = { now: () => (clock += 10) };
    const stale = await SessionLog.create(store, { systemPrompt: "p", config: {} }, options);
    await stale.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "turn one" },
      answer("one done"),
      { kind: "turn_end", turn: 1 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    // Turn two starts; its writer asks the model and freezes (a GC pause, SIGSTOP) with the turn open.
    await stale.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "turn two" },
    ]);
    const source = stale.segmentId;

    // Another writer takes over: it closes the open turn, resumes it and completes the run.
    const taker = await SessionLog.open(store, stale.sessionId, options);
    await taker.append({
      kind: "run_errored",
      message: "the process ended during this turn",
      interrupted: true,
    });
    await taker.appendMany([
      { kind: "invoke", trigger: "resume" },
      answer("two done by the taker"),
      { kind: "turn_end", turn: 2 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);

    // The stale writer resumes: its answer drifts into a fork, where it finishes the turn — no tool
    // involved, nothing a tool fence could stop — and writes last.
    const forked = await stale.appendMany([answer("two done by the stale writer")]);
    expect(forked.driftFork).not.toBeNull();
    await stale.appendMany([
      { kind: "turn_end", turn: 2 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    const fork = stale.segmentId;
    expect(fork).not.toBe(source);

    // Positive control: by the last write alone, the stale fork would be the head.
    const summaries = await summariesOf(store, stale.sessionId);
    const byLastWrite = applyHeadRule(stale.sessionId, summaries);
    expect(byLastWrite.head.segmentId).toBe(fork);
    expect(byLastWrite.head.lastEntryAt).toBeGreaterThan(byLastWrite.otherBranches[0]?.lastEntryAt as number);

    // The rule: the source line completed a run the fork's writer never saw, so it stays the head.
    const overview = await describeSession(store, stale.sessionId);
    expect(overview.head).toMatchObject({ segmentId: source, role: "head" });
    expect(overview.otherBranches).toEqual([
      expect.objectContaining({ segmentId: fork, role: "branch", supersededBy: source }),
    ]);
    const restored = await SessionLog.open(new FsStore({ root: store.root }), stale.sessionId);
    expect(restored.segmentId).toBe(source);
    expect(restored.state.turn).toBe(2);
    expect(lastAnswer(restored.state.history)).toBe("two done by the taker");
    expect(restored.state.inFlight).toBeNull();
    await store.close();
  });

  it("a stale writer that forks between turns is superseded too, once the source completed a run it never saw", async () => {
    const store = new FsStore({ root: await tempDir() });
    let clock = 1_000;
    const options = { now: () => (clock += 10) };
    const stale = await SessionLog.create(store, { systemPrompt: "p", config: {} }, options);
    await stale.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "turn one" },
      { kind: "turn_end", turn: 1 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    const taker = await SessionLog.open(store, stale.sessionId, options);
    await taker.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "the taker's turn" },
      { kind: "turn_end", turn: 2 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    expect((await stale.append({ kind: "invoke", trigger: "user" })).driftFork).not.toBeNull();
    await stale.appendMany([
      { kind: "user_input", text: "the stale writer's turn" },
      { kind: "turn_end", turn: 2 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    const overview = await describeSession(store, stale.sessionId);
    expect(overview.head.segmentId).toBe(taker.segmentId);
    expect(overview.otherBranches[0]).toMatchObject({
      segmentId: stale.segmentId,
      supersededBy: taker.segmentId,
    });
    await store.close();
  });

  it("the source line supersedes through its compactions: a completed run in the compacted continuation counts", async () => {
    const store = new FsStore({ root: await tempDir() });
    let clock = 1_000;
    const options = { now: () => (clock += 10) };
    const stale = await SessionLog.create(store, { systemPrompt: "p", config: {} }, options);
    await stale.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "turn one" },
      { kind: "turn_end", turn: 1 },
      { kind: "run_completed", result: "finished", interrupted: false },
      { kind: "invoke", trigger: "user" },
    ]);
    const taker = await SessionLog.open(store, stale.sessionId, options);
    await taker.append({
      kind: "run_errored",
      message: "the process ended during this turn",
      interrupted: true,
    });
    const compacted = await taker.createCompactedSegment({ history: [] });
    await compacted.appendMany([
      { kind: "invoke", trigger: "resume" },
      answer("after the compaction"),
      { kind: "turn_end", turn: 2 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    await stale.appendMany([answer("stale"), { kind: "turn_end", turn: 2 }]);
    const overview = await describeSession(store, stale.sessionId);
    expect(overview.head.segmentId).toBe(compacted.segmentId);
    expect(overview.otherBranches).toEqual([
      expect.objectContaining({ segmentId: stale.segmentId, supersededBy: compacted.segmentId }),
    ]);
    await store.close();
  });

  it("a branch started on purpose (forkAt) is no stale writer: written last, it is the head even behind later runs", async () => {
    const store = new FsStore({ root: await tempDir() });
    let clock = 1_000;
    const options = { now: () => (clock += 10) };
    const log = await SessionLog.create(store, { systemPrompt: "p", config: {} }, options);
    for (const turn of [1, 2]) {
      await log.appendMany([
        { kind: "invoke", trigger: "user" },
        { kind: "user_input", text: `turn ${turn}` },
        { kind: "turn_end", turn },
        { kind: "run_completed", result: "finished", interrupted: false },
      ]);
    }
    const branch = await SessionLog.forkAt(store, log.segmentId, 1, options);
    await branch.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "another turn two" },
    ]);
    const overview = await describeSession(store, log.sessionId);
    expect(overview.head.segmentId).toBe(branch.segmentId);
    expect(overview.otherBranches[0]?.supersededBy).toBeUndefined();
    await store.close();
  });

  it("the pure rule reads no facts it was not given: a fork without carried entries is never superseded", () => {
    const start = (id: string, ts: number, forkedFrom?: string) =>
      ({
        kind: "segment_start",
        ts,
        v: 3,
        session_id: "s",
        segment_id: id,
        system_prompt: null,
        config: {},
        history: [],
        ...(forkedFrom === undefined ? {} : { forked_from: { segment_id: forkedFrom, at_turn: 1 } }),
      }) as unknown as SegmentSummary<MinimalItem>["start"];
    const last = (ts: number) => ({ kind: "turn_end", ts, turn: 1 }) as unknown as Entry<MinimalItem>;
    const summaries = new Map([
      ["a", { start: start("a", 1), last: last(50), entryCount: 5 }],
      ["b", { start: start("b", 20, "a"), last: last(60), entryCount: 3 }],
    ]);
    expect(applyHeadRule("s", summaries).head.segmentId).toBe("b");
    const facts = new Map([
      ["b", { carriedUpTo: 10 }],
      ["a", { lastRunCompletedAt: 40 }],
    ]);
    expect(applyHeadRule("s", summaries, facts).head.segmentId).toBe("a");
    expect(applyHeadRule("s", summaries, new Map([["a", { lastRunCompletedAt: 40 }]])).head.segmentId).toBe(
      "b",
    );
  });
});
