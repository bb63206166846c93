import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../test/helpers/temp-dir.js";
import type { MinimalItem } from "../entry/entry-schema.js";
import { frameLine } from "../entry/line-frame.js";
import { InvalidEntryError, SessionStoreUsageError } from "../errors.js";
import { FsStore } from "../fs/fs-store.js";
import type { SessionState } from "../replay/session-state.js";
import { type DriftFork, restoreSession, SessionLog } from "./session-log.js";

const tempDir = useTempDirs();

const reply = (text: string): MinimalItem => ({
  type: "message",
  role: "assistant",
  content: [{ type: "text", text }],
});
const init = { systemPrompt: "You are terse.", config: { max_tokens: 100 } };

async function fixture() {
  const store = new FsStore({ root: await tempDir() });
  let clock = 1_000;
  const options = { now: () => ++clock };
  const log = await SessionLog.create(store, init, options);
  return { store, log, options, file: () => readFile(store.segmentPath(log.ref), "utf8") };
}

/** One complete turn: invoke, user input, reply, usage, turn_end, run_completed. */
async function turn(log: SessionLog, n: number, text = `question ${n}`): Promise<void> {
  await log.append({ kind: "invoke", trigger: "user" });
  await log.append({ kind: "user_input", text });
  await log.append({ kind: "assistant_item", item: reply(`answer ${n}`) });
  await log.append({
    kind: "llm_usage",
    history_len: 2 * n - 1,
    input_tokens: 100 * n,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    output_tokens: 5,
  });
  await log.append({ kind: "turn_end", turn: n });
  await log.append({ kind: "run_completed", result: "finished", interrupted: false });
}

/** A state without the fields that name its segment. */
function portable(state: Readonly<SessionState>) {
  const { segmentId, lineage, entryCount, inFlight, ...rest } = state;
  return { ...rest, inFlightTrigger: inFlight?.trigger ?? null };
}

describe("SessionLog create, append, restore", () => {
  it("restores exactly the state the writer had and keeps appending to the same segment", async () => {
    const { store, log, options } = await fixture();
    await turn(log, 1);
    await log.append({ kind: "extension", domain: "memory.extract", payload: { history_len: 2 } });
    await log.append({ kind: "config_changed", config: { max_tokens: 200 } });
    const restored = await SessionLog.open(store, log.sessionId, options);
    expect(restored.state).toEqual(log.state);
    expect(restored.state).toMatchObject({ turn: 1, interrupted: false, systemPrompt: "You are terse." });
    expect(await restored.append({ kind: "invoke", trigger: "resume" })).toEqual({
      segmentId: log.segmentId,
      index: 9,
      driftFork: null,
    });
    store.close();
  });

  it("writes kind and ts first on every line, ts from the injected clock, seq and crc last", async () => {
    const { store, log, file } = await fixture();
    await log.append({ kind: "user_input", text: "hi" });
    await log.append({ kind: "turn_end", turn: 1, ts: 42 });
    const lines = (await file()).trimEnd().split("\n");
    expect(lines[1]).toMatch(/^\{"kind":"user_input","ts":1002,"text":"hi","seq":1,"crc":"[0-9a-f]{8}"\}$/);
    expect(lines[1]).toBe(frameLine('{"kind":"user_input","ts":1002,"text":"hi"}', 1));
    expect(lines[2]).toBe(frameLine('{"kind":"turn_end","ts":42,"turn":1}', 2));
    expect(JSON.parse(lines[0] as string)).toMatchObject({ kind: "segment_start", ts: 1001, v: 3, seq: 0 });
    store.close();
  });

  it("rejects segment_start and invalid entries without changing file or state", async () => {
    const { store, log, file } = await fixture();
    const before = await file();
    await expect(log.append({ kind: "segment_start" } as never)).rejects.toThrow(SessionStoreUsageError);
    await expect(log.append({ kind: "turn_end", turn: 1.5 })).rejects.toThrow(InvalidEntryError);
    expect(await file()).toBe(before);
    expect(log.entryCount).toBe(1);
    store.close();
  });

  it("refuses a segment file that carries other ids than its path", async () => {
    const { store, log } = await fixture();
    const { copyFile, mkdir } = await import("node:fs/promises");
    const ref = { sessionId: log.sessionId, segmentId: "renamed-segment" };
    await mkdir(store.root, { recursive: true });
    await copyFile(store.segmentPath(log.ref), store.segmentPath(ref));
    await expect(SessionLog.openSegment(store, ref)).rejects.toThrow(/copied or renamed/);
    store.close();
  });
});

describe("SessionLog writes", () => {
  it("runs appends fired without awaiting one at a time, in call order, without drifting on itself", async () => {
    const { store, log } = await fixture();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => log.append({ kind: "user_input", text: `n${i}` })),
    );
    expect(results.map((result) => [result.index, result.driftFork])).toEqual(
      Array.from({ length: 20 }, (_, i) => [i + 1, null]),
    );
    const restored = await restoreSession(store, log.sessionId);
    expect(restored.history.map((item) => (item.content as { text: string }[])[0]?.text)).toEqual(
      Array.from({ length: 20 }, (_, i) => `n${i}`),
    );
    await store.close();
  });
});

describe("SessionLog drift", () => {
  it("carries history sources and every entry of a folded extension domain into the fork", async () => {
    const root = await tempDir();
    const fold = { tasks: (state: unknown, payload: unknown) => [...((state as unknown[]) ?? []), payload] };
    const options = { extensionFolds: fold };
    const log = await SessionLog.create(new FsStore({ root }), init, options);
    await log.append({ kind: "system_item", item: { kind: "context", body: "<context/>" } });
    await log.append({ kind: "user_input", text: "a.md", segments: [{ type: "file", path: "a.md" }] });
    await log.append({ kind: "extension", domain: "tasks", payload: "one" });
    await log.append({ kind: "extension", domain: "tasks", payload: "two" });
    await (await SessionLog.open(new FsStore({ root }), log.sessionId)).append({
      kind: "user_input",
      text: "other",
    });
    const before = portable(log.state);
    const result = await log.append({ kind: "extension", domain: "tasks", payload: "three" });
    expect(result.driftFork).not.toBeNull();
    const restored = await SessionLog.openSegment(new FsStore({ root }), log.ref, options);
    expect(restored.state).toEqual(log.state);
    expect(portable(restored.state)).toEqual({
      ...before,
      extensions: new Map([["tasks", ["one", "two", "three"]]]),
    });
    expect(restored.state.historySources.map((source) => source.from)).toEqual(["system_item", "user_input"]);
  });

  it("forks a writer whose known count is stale into a new segment, leaving the source untouched", async () => {
    const { store, log, options, file } = await fixture();
    await turn(log, 1);
    const loser = await SessionLog.open(store, log.sessionId, options);
    const forks: DriftFork[] = [];
    const loserWithListener = await SessionLog.open(store, log.sessionId, {
      ...options,
      onDriftFork: (e) => forks.push(e),
    });
    await log.append({ kind: "user_input", text: "winner was first" });
    const source = await file();

    const result = await loserWithListener.append({ kind: "user_input", text: "loser" });
    expect(await file()).toBe(source);
    expect(result.driftFork).toEqual({
      fromSegmentId: log.segmentId,
      toSegmentId: loserWithListener.segmentId,
      expectedCount: 7,
      actualCount: 8,
    });
    expect(forks).toEqual([result.driftFork]);
    expect(loserWithListener.segmentId).not.toBe(log.segmentId);
    expect(loserWithListener.state.lineage.forkedFrom).toEqual({ segmentId: log.segmentId, atTurn: 1 });
    expect(
      loserWithListener.state.history.map((item) => (item.content as { text: string }[])[0]?.text),
    ).toEqual(["question 1", "answer 1", "loser"]);
    expect(loser.segmentId).toBe(log.segmentId);
    expect(await store.listSegments(log.sessionId)).toEqual([loserWithListener.segmentId, log.segmentId]);
    const restored = await restoreSession(store, log.sessionId);
    expect(restored).toEqual(loserWithListener.state);
    store.close();
  });

  it("carries usage, extensions and an in-flight turn into the fork so replay matches the writer", async () => {
    const { store, log, options } = await fixture();
    await turn(log, 1);
    await log.append({ kind: "extension", domain: "memory.extract", payload: { history_len: 2 } });
    await log.append({ kind: "invoke", trigger: "user" });
    await log.append({ kind: "user_input", text: "in flight" });
    const other = await SessionLog.open(store, log.sessionId, options);
    await other.append({ kind: "system_item", item: { kind: "notification", body: "someone else" } });

    const before = portable(log.state);
    const result = await log.append({
      kind: "assistant_item",
      item: { type: "tool_call", call_id: "c1", name: "grep", arguments: "{}" },
    });
    expect(result.driftFork).not.toBeNull();
    const restored = await SessionLog.openSegment(store, log.ref);
    expect(restored.state).toEqual(log.state);
    expect(portable(log.state)).toEqual({
      ...before,
      history: [...before.history, { type: "tool_call", call_id: "c1", name: "grep", arguments: "{}" }],
    });
    expect(log.state).toMatchObject({ interrupted: true, turn: 1, inFlight: { trigger: "user" } });
    expect(log.state.usage).toHaveLength(1);
    expect(log.state.extensions.get("memory.extract")).toEqual({ history_len: 2 });

    // Rolling the open turn back still works in the fork.
    await log.truncate(log.state.inFlight?.entryIndex as number);
    expect(log.state.history).toHaveLength(2);
    expect(log.state).toMatchObject({ interrupted: false, inFlight: null });
    store.close();
  });
});

describe("SessionLog truncate", () => {
  it("rolls back a turn cancelled before any output by cutting the log before its invoke", async () => {
    const { store, log, file } = await fixture();
    await turn(log, 1);
    const settled = await file();
    const stateBefore = structuredClone(log.state);
    await log.append({ kind: "invoke", trigger: "user" });
    await log.append({ kind: "user_input", text: "never mind" });
    const invokeAt = log.state.inFlight?.entryIndex as number;
    expect(log.state.interrupted).toBe(true);

    const result = await log.truncate(invokeAt);
    expect(result).toEqual({ segmentId: log.segmentId, index: invokeAt, driftFork: null });
    expect(await file()).toBe(settled);
    expect(log.state).toEqual(stateBefore);
    await log.append({ kind: "invoke", trigger: "user" });
    expect((await restoreSession(store, log.sessionId)).inFlight?.entryIndex).toBe(invokeAt);
    store.close();
  });

  it("does not cut a segment someone else appended to; the cut state continues in a fork", async () => {
    const { store, log, options } = await fixture();
    const sourcePath = store.segmentPath(log.ref);
    await turn(log, 1);
    await log.append({ kind: "invoke", trigger: "user" });
    const other = await SessionLog.open(store, log.sessionId, options);
    await other.append({ kind: "user_input", text: "theirs" });
    const source = await readFile(sourcePath, "utf8");
    const result = await log.truncate(7);
    expect(await readFile(sourcePath, "utf8")).toBe(source);
    expect(log.segmentId).not.toBe(other.segmentId);
    expect(result.driftFork?.fromSegmentId).toBe(other.segmentId);
    expect(log.state).toMatchObject({ entryCount: 3, inFlight: null, turn: 1, interrupted: false });
    expect(log.state.usage).toHaveLength(1);
    expect(log.state.history).toHaveLength(2);
    store.close();
  });

  it("rejects a cut that would remove segment_start or reach past the end", async () => {
    const { store, log } = await fixture();
    await expect(log.truncate(0)).rejects.toThrow(SessionStoreUsageError);
    await expect(log.truncate(2)).rejects.toThrow(/holds 1/);
    store.close();
  });
});

describe("SessionLog fork, forkAt, compaction", () => {
  it("forkAt starts a new segment in the same session at a turn; the source is untouched", async () => {
    const { store, log, options, file } = await fixture();
    await turn(log, 1);
    await log.append({ kind: "config_changed", config: { max_tokens: 1 } });
    await turn(log, 2);
    await log.append({ kind: "extension", domain: "memory.extract", payload: 4 });
    const source = await file();

    const forked = await SessionLog.forkAt(store, log.segmentId, 1, options);
    expect(await file()).toBe(source);
    expect(forked.sessionId).toBe(log.sessionId);
    expect(forked.state).toMatchObject({
      turn: 1,
      config: { max_tokens: 1 },
      systemPrompt: "You are terse.",
      usage: [],
      interrupted: false,
      lineage: { forkedFrom: { segmentId: log.segmentId, atTurn: 1 }, compactedFrom: null },
    });
    expect(forked.state.extensions.size).toBe(0);
    expect(forked.state.history).toEqual([
      { type: "message", role: "user", content: [{ type: "text", text: "question 1" }] },
      reply("answer 1"),
    ]);
    expect(forked.entryCount).toBe(1);
    await expect(SessionLog.forkAt(store, log.segmentId, 9, options)).rejects.toThrow(/has no turn 9/);
    await expect(SessionLog.forkAt(store, "01999f00-0000-7000-8000-000000000000", 1)).rejects.toThrow(
      /not found/,
    );
    store.close();
  });

  it("fork copies a session into a new session up to its last finished turn", async () => {
    const { store, log, options, file } = await fixture();
    await turn(log, 1);
    await turn(log, 2);
    await log.append({ kind: "invoke", trigger: "user" });
    await log.append({ kind: "user_input", text: "unfinished" });
    const source = await file();

    const copy = await SessionLog.fork(store, log.sessionId, options);
    expect(await file()).toBe(source);
    expect(copy.sessionId).not.toBe(log.sessionId);
    expect(copy.state.turn).toBe(2);
    expect(copy.state.history).toHaveLength(4);
    expect(copy.state.interrupted).toBe(false);
    expect(copy.state.lineage.forkedFrom).toEqual({ segmentId: log.segmentId, atTurn: 2 });
    expect(await store.lookupSessionOf(copy.state.lineage.forkedFrom?.segmentId as string)).toBe(
      log.sessionId,
    );
    expect(
      (await SessionLog.fork(store, log.sessionId, { ...options, atTurn: 1 })).state.history,
    ).toHaveLength(2);
    store.close();
  });

  it("a compacted segment keeps the system prompt string, resets usage and extensions, and restores as newest", async () => {
    const { store, log, file } = await fixture();
    await turn(log, 1);
    await turn(log, 2);
    await log.append({ kind: "extension", domain: "memory.extract", payload: { history_len: 4 } });
    const source = await file();
    const summary: MinimalItem = {
      type: "message",
      role: "user",
      content: [{ type: "text", text: "[Compacted context summary]\nTwo questions were answered." }],
    };
    const compacted = await log.createCompactedSegment({ history: [summary, reply("answer 2")] });
    expect(await file()).toBe(source);
    await compacted.append({ kind: "system_item", item: { kind: "context", body: "<context/>" } });

    const restored = await restoreSession(store, log.sessionId);
    expect(restored.segmentId).toBe(compacted.segmentId);
    expect(restored).toMatchObject({
      systemPrompt: log.state.systemPrompt,
      config: log.state.config,
      turn: 2,
      usage: [],
      lineage: { compactedFrom: { segmentId: log.segmentId, atTurn: 2 }, forkedFrom: null },
    });
    expect(restored.extensions.size).toBe(0);
    expect(restored.history).toEqual([
      summary,
      reply("answer 2"),
      { type: "message", role: "system", content: [{ type: "text", text: "<context/>" }] },
    ]);
    store.close();
  });
});
