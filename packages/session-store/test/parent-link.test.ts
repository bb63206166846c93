import { describe, expect, it } from "vitest";
import { EntrySchema } from "../src/entry/entry-schema.js";
import { FsStore } from "../src/fs/fs-store.js";
import { SessionLog } from "../src/log/session-log.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();
const PARENT = { session_id: "01parent", call_id: "toolu_1", role: "reviewer", depth: 1 };

describe("a child session's parent link (sub-pods)", () => {
  it("is written to segment_start, restored into state, and carried by compaction", async () => {
    const store = new FsStore({ root: await tempDir() });
    const log = await SessionLog.create(store, { systemPrompt: "p", config: {}, parent: PARENT });
    await log.append({ kind: "user_input", text: "hi" });
    const reopened = await SessionLog.open(store, log.sessionId);
    expect(reopened.state.parent).toEqual(PARENT);
    const compacted = await reopened.createCompactedSegment({ history: [] });
    const { start } = await store.describeSegment(compacted.ref);
    expect(start).toMatchObject({ kind: "segment_start", parent: PARENT });
    expect((await SessionLog.open(store, log.sessionId)).state.parent).toEqual(PARENT);
    await store.close();
  });

  it("is absent for a root session, and a malformed link does not validate", async () => {
    const store = new FsStore({ root: await tempDir() });
    const log = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    expect("parent" in log.state).toBe(false);
    await store.close();
    const start = {
      kind: "segment_start",
      ts: 1,
      v: 2,
      session_id: "s",
      segment_id: "g",
      system_prompt: null,
      config: {},
      history: [],
    };
    expect(EntrySchema.safeParse({ ...start, parent: PARENT }).success).toBe(true);
    expect(EntrySchema.safeParse({ ...start, parent: { ...PARENT, depth: 0 } }).success).toBe(false);
    expect(EntrySchema.safeParse({ ...start, parent: { ...PARENT, call_id: "" } }).success).toBe(false);
  });
});
