import { copyFile, mkdir, readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FsStore } from "../src/fs/fs-store.js";
import { restoreSession, SessionLog } from "../src/log/session-log.js";
import type { SessionState } from "../src/replay/session-state.js";
import {
  V1,
  V1_COMPACTED,
  V1_COMPACTED_SOURCE,
  V1_FORKED,
  V1_INTERRUPTED,
  V1_PLAIN,
  V1_TOOLS,
} from "./helpers/fixture-states.js";
import { useTempDirs } from "./helpers/temp-dir.js";

// Logs written by format v1, frozen (their exact states: helpers/fixture-states.ts). Later formats
// add their own folders and keep these passing (fixtures-corpus.test.ts restores every one).
const fixtures = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const v1 = join(fixtures, "v1");
const tempDir = useTempDirs();

const { S_PLAIN, G_PLAIN, G_FORK, S_TOOLS, S_COMP, G_CSRC, S_INT } = V1;

/** A store holding the given fixture files (paths under fixtures/) under the ids their segment_start names. */
async function storeFrom(...paths: string[]): Promise<FsStore> {
  const root = await tempDir();
  for (const path of paths) {
    const first = JSON.parse((await readFile(join(fixtures, path), "utf8")).split("\n")[0] as string);
    await mkdir(join(root, first.session_id), { recursive: true });
    await copyFile(join(fixtures, path), join(root, first.session_id, `${first.segment_id}.jsonl`));
  }
  return new FsStore({ root });
}

const storeWith = (...files: string[]) => storeFrom(...files.map((file) => join("v1", file)));

async function segmentState(store: FsStore, sessionId: string, segmentId: string): Promise<SessionState> {
  return (await SessionLog.openSegment(store, { sessionId, segmentId })).state;
}

describe("format v1 fixture corpus", () => {
  it("replays a plain session: prompt, config change, history, turns, usage, extension state", async () => {
    const store = await storeWith("plain.jsonl");
    expect(await restoreSession(store, S_PLAIN)).toEqual(V1_PLAIN);
  });

  it("replays tools and reasoning with provider metadata byte-identically", async () => {
    const store = await storeWith("tools-reasoning.jsonl");
    const state = await restoreSession(store, S_TOOLS);
    expect(state).toEqual(V1_TOOLS);

    // Every stored item serializes back to exactly the bytes in the log (key order included).
    const lines = (await readFile(join(v1, "tools-reasoning.jsonl"), "utf8")).trimEnd().split("\n");
    const itemLines = lines.filter((line) => /^\{"kind":"(assistant_item|tool_result)"/.test(line));
    const storedItems = state.history.filter((item) => item.type !== "message" || item.role === "assistant");
    expect(itemLines.map((line) => line.slice(line.indexOf('"item":') + 7, -1))).toEqual(
      storedItems.map((item) => JSON.stringify(item)),
    );
  });

  it("replays a fork: the session restores from the fork, the source segment keeps its own state", async () => {
    const store = await storeWith("plain.jsonl", "forked.jsonl");
    expect(await store.listSegments(S_PLAIN)).toEqual([G_FORK, G_PLAIN]);
    expect(await restoreSession(store, S_PLAIN)).toEqual(V1_FORKED);
    expect((await segmentState(store, S_PLAIN, G_PLAIN)).turn).toBe(2);
    expect(await store.lookupSessionOf(G_PLAIN)).toBe(S_PLAIN);
  });

  it("replays a compacted pair: the new segment restores with the same prompt and a fresh usage history", async () => {
    const store = await storeWith("compacted-source.jsonl", "compacted.jsonl");
    expect(await restoreSession(store, S_COMP)).toEqual(V1_COMPACTED);
    expect(await segmentState(store, S_COMP, G_CSRC)).toEqual(V1_COMPACTED_SOURCE);
  });

  it("replays a session that crashed mid-turn as interrupted with the turn in flight", async () => {
    const store = await storeWith("interrupted.jsonl");
    expect(await restoreSession(store, S_INT)).toEqual(V1_INTERRUPTED);
  });

  it("keeps appending to every restored v1 session without rewriting what was there", async () => {
    const files = (await readdir(v1)).filter((name) => name.endsWith(".jsonl"));
    const store = await storeWith(...files);
    for (const sessionId of await store.listSessions()) {
      const log = await SessionLog.open(store, sessionId);
      const path = store.segmentPath(log.ref);
      const before = await readFile(path, "utf8");
      await log.append({ kind: "config_changed", config: { max_tokens: 1 } });
      const after = await readFile(path, "utf8");
      expect(after.startsWith(before)).toBe(true);
      // A v1 segment stays v1: the new line is plain JSON, without seq and crc.
      expect(after.slice(before.length)).toMatch(
        /^\{"kind":"config_changed","ts":\d+,"config":\{"max_tokens":1\}\}\n$/,
      );
      expect((await restoreSession(store, sessionId)).config).toEqual({ max_tokens: 1 });
    }
    store.close();
  });
});
