import * as nodeFs from "node:fs";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { Entry } from "../src/entry/entry-schema.js";
import { FsStore } from "../src/fs/fs-store.js";
import type { SyncFs } from "../src/fs/sync-fs.js";
import { SessionLog } from "../src/log/session-log.js";
import { type Child, spawnChild } from "./helpers/children.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();

/** A `race-child.mjs` process; its stdout lines are read with `next()`. */
function writer(args: string[]): Child {
  return spawnChild("race-child.mjs", args);
}

async function readAll(store: FsStore, ref: { sessionId: string; segmentId: string }): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of store.readAll(ref)) out.push(entry);
  return out;
}

describe("concurrent writers in separate processes", () => {
  it("two processes appending to one segment never interleave bytes and lose nothing", async () => {
    const root = await tempDir();
    const log = await SessionLog.create(new FsStore({ root }), { systemPrompt: null, config: {} });
    const count = 150;
    const writers = ["alpha", "beta"].map((name) =>
      writer(["interleave", root, log.sessionId, log.segmentId, name, String(count)]),
    );
    for (const w of writers) expect(await w.next()).toBe("ready");
    for (const w of writers) w.child.stdin?.write("go\n");
    for (const w of writers) expect(await w.next()).toBe("done");

    const store = new FsStore({ root });
    const entries = await readAll(store, log.ref); // throws CorruptEntryError on any torn line
    expect(entries).toHaveLength(1 + 2 * count);
    const raw = await readFile(store.segmentPath(log.ref), "utf8");
    expect(raw.endsWith("\n")).toBe(true);
    for (const name of ["alpha", "beta"]) {
      const mine = entries.filter(
        (e): e is Extract<Entry, { kind: "extension" }> => e.kind === "extension" && e.domain === name,
      );
      expect(mine.map((e) => (e.payload as { i: number }).i)).toEqual([...Array(count).keys()]);
      for (const entry of mine) {
        const { i, filler } = entry.payload as { i: number; filler: string };
        expect(filler).toBe(`${name}${"ü".repeat(512 + ((i * 7919) % 48) * 1024)}`);
      }
    }
    // Both writers really ran at the same time: their entries alternate somewhere in the file.
    const owners = entries.slice(1).map((e) => (e as { domain: string }).domain);
    const switches = owners.filter((owner, i) => i > 0 && owner !== owners[i - 1]).length;
    expect(switches).toBeGreaterThan(1);
    store.close();
  });

  it("a process that keeps appending hands the lock over to a waiting process", async () => {
    const root = await tempDir();
    const log = await SessionLog.create(new FsStore({ root }), { systemPrompt: null, config: {} });
    const busy = writer(["busy", root, log.sessionId, log.segmentId]);
    try {
      expect(await busy.next()).toBe("ready");
      busy.child.stdin?.write("go\n");
      expect(await busy.next()).toBe("appending");
      // Without the hand-over this would time out: the busy writer's lease never goes idle. (The
      // hand-over takes milliseconds; the bound is generous for a busy machine.)
      const store = new FsStore({ root, lockTimeoutMs: 10_000 });
      const entry: Entry = { kind: "extension", ts: 1, domain: "waiter", payload: "got in" };
      expect((await store.append(log.ref, [entry])).status).toBe("appended");
      store.close();
      expect(busy.child.exitCode).toBeNull();
    } finally {
      busy.child.kill("SIGKILL");
    }
    const entries = await readAll(new FsStore({ root }), log.ref);
    const at = entries.findIndex((e) => e.kind === "extension" && e.domain === "waiter");
    expect(at).toBeGreaterThan(1);
  });

  it("the loser of a drift race forks with forked_from and leaves the source untouched", async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const log = await SessionLog.create(store, { systemPrompt: "race", config: { n: 1 } });
    await log.append({ kind: "invoke", trigger: "user" });
    await log.append({ kind: "user_input", text: "before the race" });
    await log.append({ kind: "turn_end", turn: 1 });
    await log.append({ kind: "run_completed", result: "finished", interrupted: false });
    store.close();
    const sourcePath = store.segmentPath(log.ref);
    const initial = await readFile(sourcePath, "utf8");

    for (let round = 0; round < 3; round++) {
      const before = await readFile(sourcePath, "utf8");
      const sourceState = (await SessionLog.openSegment(new FsStore({ root }), log.ref)).state;
      const racers = ["red", "blue"].map((name) =>
        writer(["drift", root, log.sessionId, log.segmentId, `${name}-${round}`]),
      );
      for (const r of racers) expect(await r.next()).toBe("ready");
      for (const r of racers) r.child.stdin?.write("go\n");
      const results = await Promise.all(racers.map(async (r) => JSON.parse(await r.next())));

      const losers = results.filter((r) => r.driftFork !== null);
      const winners = results.filter((r) => r.driftFork === null);
      expect(losers).toHaveLength(1);
      expect(winners).toHaveLength(1);
      const [winner, loser] = [winners[0], losers[0]];
      const winnerName = results.indexOf(winner) === 0 ? `red-${round}` : `blue-${round}`;
      const loserName = results.indexOf(loser) === 0 ? `red-${round}` : `blue-${round}`;

      // The source gained exactly the winner's line and nothing of the loser.
      const after = await readFile(sourcePath, "utf8");
      expect(after.startsWith(before)).toBe(true);
      const added = after.slice(before.length).trimEnd().split("\n");
      expect(added).toHaveLength(1);
      expect(JSON.parse(added[0] as string)).toMatchObject({ kind: "user_input", text: winnerName });
      expect(winner.segmentId).toBe(log.segmentId);

      // The loser continued in a new segment of the same session that names its source.
      expect(loser.driftFork.fromSegmentId).toBe(log.segmentId);
      const fork = await readAll(new FsStore({ root }), {
        sessionId: log.sessionId,
        segmentId: loser.segmentId,
      });
      expect(fork[0]).toMatchObject({
        kind: "segment_start",
        session_id: log.sessionId,
        forked_from: { segment_id: log.segmentId, at_turn: 1 },
        system_prompt: "race",
        config: { n: 1 },
      });
      const head = fork[0] as Extract<Entry, { kind: "segment_start" }>;
      expect(head.history).toEqual(sourceState.history);
      expect(fork.at(-1)).toMatchObject({ kind: "user_input", text: loserName });
    }
    expect((await readFile(sourcePath, "utf8")).startsWith(initial)).toBe(true);
  });

  it("two processes each holding a lease and wanting the other's segment both get through", {
    timeout: 30_000,
  }, async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const a = await SessionLog.create(store, { systemPrompt: null, config: {} });
    const b = await a.createCompactedSegment({ history: [] });
    await store.close();
    const writers = [
      writer(["cross", root, a.sessionId, a.segmentId, b.segmentId]),
      writer(["cross", root, a.sessionId, b.segmentId, a.segmentId]),
    ];
    try {
      for (const w of writers) expect(await w.next()).toBe("holding");
      // The deadlock's precondition really holds: each process has a lease on its own segment.
      expect(await readFile(`${store.segmentPath(a.ref)}.lock`, "utf8")).toBe(`${writers[0]?.child.pid}\n`);
      expect(await readFile(`${store.segmentPath(b.ref)}.lock`, "utf8")).toBe(`${writers[1]?.child.pid}\n`);
      for (const w of writers) w.child.stdin?.write("go\n");
      // Waiting without blocking lets each drop its idle lease; a blocking wait timed out both.
      for (const w of writers) expect(JSON.parse(await w.next())).toMatchObject({ status: "appended" });
    } finally {
      for (const w of writers) w.child.kill("SIGKILL");
    }
    for (const ref of [a.ref, b.ref]) {
      const domains = (await readAll(new FsStore({ root }), ref)).map(
        (e) => (e as { domain?: string }).domain,
      );
      expect(domains.slice(1)).toEqual(["own", "cross"]);
    }
  });

  it("a writer that drifts frees the old segment before writing its fork, while another process waits for it", {
    timeout: 30_000,
  }, async () => {
    const root = await tempDir();
    // Records who holds the old segment's lock at the moment the fork's file is being written.
    const holderAtForkWrite: (string | null)[] = [];
    let lockPath = "";
    const fs: SyncFs = {
      ...nodeFs,
      openSync: ((path: string, flags: string, mode?: number) => {
        if (typeof path === "string" && path.includes(".jsonl.tmp-") && lockPath !== "") {
          holderAtForkWrite.push(
            nodeFs.existsSync(lockPath) ? nodeFs.readFileSync(lockPath, "utf8").trim() : null,
          );
        }
        return nodeFs.openSync(path, flags, mode);
      }) as SyncFs["openSync"],
    };
    const store = new FsStore({ root, fs });
    const log = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    for (let i = 0; i < 50; i++)
      await log.append({ kind: "user_input", text: `history ${i} ${"ü".repeat(2000)}` });
    lockPath = `${store.segmentPath(log.ref)}.lock`;
    const busy = writer(["busy", root, log.sessionId, log.segmentId]);
    try {
      expect(await busy.next()).toBe("ready");
      busy.child.stdin?.write("go\n");
      expect(await busy.next()).toBe("appending");
      // This writer's count is stale (the busy process appended): it waits its turn, sees the
      // drift and forks while the busy process keeps asking for the segment.
      const result = await log.append({ kind: "user_input", text: "mine" });
      expect(result.driftFork).toMatchObject({
        fromSegmentId: expect.any(String),
        toSegmentId: log.segmentId,
      });
      expect(holderAtForkWrite).toHaveLength(1);
      expect(holderAtForkWrite[0]).not.toBe(String(process.pid));
      expect(busy.child.exitCode).toBeNull();
    } finally {
      busy.child.kill("SIGKILL");
    }
    await store.close();
  });
});
