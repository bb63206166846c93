import { copyFile, mkdir, readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FsStore } from "../src/fs/fs-store.js";
import { restoreSession, SessionLog } from "../src/log/session-log.js";
import { V2, V2_ANNOTATED_FORK } from "./helpers/fixture-states.js";
import { useTempDirs } from "./helpers/temp-dir.js";

// Logs written by format v2, frozen: the v1 corpus re-framed (same entries, `seq` and `crc`
// added, `v: 2`), an annotated session exercising what v2 added, and what main wrote as v2
// before format v3 existed: approvals and a child session (`segment_start.parent`). Their exact
// states: helpers/fixture-states.ts.
const fixtures = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const tempDir = useTempDirs();

const { S_ANN, G_ANN_SOURCE, G_ANN_FORK } = V2;

async function storeFrom(...paths: string[]): Promise<FsStore> {
  const root = await tempDir();
  for (const path of paths) {
    const first = JSON.parse((await readFile(join(fixtures, path), "utf8")).split("\n")[0] as string);
    await mkdir(join(root, first.session_id), { recursive: true });
    await copyFile(join(fixtures, path), join(root, first.session_id, `${first.segment_id}.jsonl`));
  }
  return new FsStore({ root });
}

describe("format v2 fixture corpus", () => {
  it("every re-framed v1 log restores to exactly the state of its v1 original", async () => {
    const files = (await readdir(join(fixtures, "v1"))).filter((name) => name.endsWith(".jsonl"));
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const file of files) {
      const v1 = await storeFrom(join("v1", file));
      const v2 = await storeFrom(join("v2", file));
      const [sessionId] = await v1.listSessions();
      const [segmentId] = await v1.listSegments(sessionId as string);
      const ref = { sessionId: sessionId as string, segmentId: segmentId as string };
      const old = (await SessionLog.openSegment(v1, ref)).state;
      const framed = (await SessionLog.openSegment(v2, ref)).state;
      expect(framed, file).toEqual({ ...old, formatVersion: 2 });
    }
  });

  it("restores the annotated session: system item kinds, user input segments, reasoning tokens, branches", async () => {
    const store = await storeFrom("v2/annotated-source.jsonl", "v2/annotated-fork.jsonl");
    const log = await SessionLog.open(store, S_ANN);
    expect(log.segmentId).toBe(G_ANN_FORK);
    expect(log.otherBranches.map((branch) => [branch.segmentId, branch.role, branch.entryCount])).toEqual([
      [G_ANN_SOURCE, "branch", 18],
    ]);
    expect(log.state).toEqual(V2_ANNOTATED_FORK);

    // The source replays with a registered fold for the "tasks" domain; other domains stay latest-wins.
    const source = await SessionLog.openSegment(
      store,
      { sessionId: S_ANN, segmentId: G_ANN_SOURCE },
      {
        extensionFolds: {
          tasks: (state, payload) => [...((state as string[]) ?? []), (payload as { add: string }).add],
        },
      },
    );
    expect(source.state.extensions).toEqual(
      new Map<string, unknown>([
        ["memory.extract", { history_len: 4 }],
        ["tasks", ["book hotel", "compare prices"]],
      ]),
    );
    expect(source.state.usage).toEqual([
      {
        historyLen: 3,
        inputTokens: 2200,
        cacheReadTokens: 0,
        cacheWriteTokens: 2100,
        outputTokens: 180,
        reasoningTokens: 96,
      },
    ]);
  });

  it("keeps every stored item's bytes exactly as written inside its framed line", async () => {
    const store = await storeFrom("v2/tools-reasoning.jsonl");
    const [sessionId] = await store.listSessions();
    const state = await restoreSession(store, sessionId as string);
    const lines = (await readFile(join(fixtures, "v2", "tools-reasoning.jsonl"), "utf8"))
      .trimEnd()
      .split("\n");
    const itemLines = lines.filter((line) => /^\{"kind":"(assistant_item|tool_result)"/.test(line));
    const storedItems = state.history.filter((item) => item.type !== "message" || item.role === "assistant");
    expect(
      itemLines.map((line) => line.slice(line.indexOf('"item":') + 7, line.lastIndexOf(',"seq":'))),
    ).toEqual(storedItems.map((item) => JSON.stringify(item)));
  });
});
