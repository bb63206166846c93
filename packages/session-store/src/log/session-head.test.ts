import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../test/helpers/temp-dir.js";
import { FsStore } from "../fs/fs-store.js";
import { describeSession } from "./session-head.js";
import { restoreSession, SessionLog } from "./session-log.js";

const tempDir = useTempDirs();

async function session() {
  const store = new FsStore({ root: await tempDir() });
  let clock = 1_000;
  const options = { now: () => (clock += 10) };
  const log = await SessionLog.create(store, { systemPrompt: "p", config: {} }, options);
  await log.append({ kind: "user_input", text: "one" });
  await log.append({ kind: "turn_end", turn: 1 });
  return { store, log, options };
}

describe("head rule", () => {
  it("a compaction replaces its source: the compacted segment is the head, the source is listed as compacted", async () => {
    const { store, log } = await session();
    const compacted = await log.createCompactedSegment({ history: [] });
    const overview = await describeSession(store, log.sessionId);
    expect(overview.head).toMatchObject({ segmentId: compacted.segmentId, role: "head", entryCount: 1 });
    expect(overview.otherBranches).toEqual([]);
    expect(overview.compacted).toEqual([
      expect.objectContaining({
        segmentId: log.segmentId,
        role: "compacted",
        compactedInto: compacted.segmentId,
      }),
    ]);
    expect((await restoreSession(store, log.sessionId)).segmentId).toBe(compacted.segmentId);
    await store.close();
  });

  it("a compacted source written to after the compaction stays a live branch and, written last, is the head", async () => {
    const { store, log, options } = await session();
    const compacted = await log.createCompactedSegment({ history: [] });
    // A second writer still on the old segment (it never saw the compaction) keeps appending.
    const stale = await SessionLog.openSegment(store, log.ref, options);
    await stale.append({ kind: "user_input", text: "after the compaction" });
    const overview = await describeSession(store, log.sessionId);
    expect(overview.head).toMatchObject({ segmentId: log.segmentId, role: "head", entryCount: 4 });
    expect(overview.otherBranches.map((branch) => branch.segmentId)).toEqual([compacted.segmentId]);
    expect(overview.compacted).toEqual([]);
    const restored = await SessionLog.open(store, log.sessionId);
    expect(restored.state.history.at(-1)).toMatchObject({ content: [{ text: "after the compaction" }] });
    expect(restored.otherBranches).toEqual([
      expect.objectContaining({ segmentId: compacted.segmentId, role: "branch" }),
    ]);
    await store.close();
  });

  it("forkAt makes a new branch the head; the source stays listed", async () => {
    const { store, log, options } = await session();
    const branch = await SessionLog.forkAt(store, log.segmentId, 1, options);
    const overview = await describeSession(store, log.sessionId);
    expect(overview.head.segmentId).toBe(branch.segmentId);
    expect(overview.otherBranches).toEqual([
      expect.objectContaining({ segmentId: log.segmentId, role: "branch", entryCount: 3, startedAt: 1_010 }),
    ]);
    await store.close();
  });
});
