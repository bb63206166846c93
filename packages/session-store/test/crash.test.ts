import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { FsStore } from "../src/fs/fs-store.js";
import { SessionLog } from "../src/log/session-log.js";
import { childScript } from "./helpers/built-package.js";
import { payloadOf, seqOf } from "./helpers/payload.mjs";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();
const KILLS = 200;

/** Small seeded PRNG so a failing run can be replayed with the seed it prints. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface ChildRun {
  child: ChildProcess;
  reported: number[];
  exited: Promise<void>;
  /** Resolves once the child has loaded the package and waits for "go". */
  warm: Promise<void>;
  waitForReports(n: number): Promise<void>;
}

/** Spawns a writer that loads the built package and waits for "go" on stdin before restoring. */
function spawnWriter(script: string, root: string, sessionId: string): ChildRun {
  const child = spawn(process.execPath, [script, root, sessionId], { stdio: ["pipe", "pipe", "pipe"] });
  const reported: number[] = [];
  const stderr: string[] = [];
  let buffered = "";
  let onWarm: () => void = () => {};
  const warm = new Promise<void>((resolve) => {
    onWarm = resolve;
  });
  let waiter: { n: number; resolve: () => void } | undefined;
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      if (line === "warm") onWarm();
      else if (/^\d+$/.test(line)) reported.push(Number(line));
    }
    if (waiter !== undefined && reported.length >= waiter.n) waiter.resolve();
  });
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    reported,
    exited,
    warm,
    waitForReports: (n) =>
      new Promise<void>((resolve, reject) => {
        if (reported.length >= n) return resolve();
        waiter = { n, resolve };
        exited.then(() => reject(new Error(`writer exited on its own:\n${stderr.join("")}`)));
      }),
  };
}

describe("crash safety under SIGKILL", () => {
  it(`keeps every reported entry across ${KILLS} kills of a real appending process`, {
    timeout: 120_000,
  }, async () => {
    const script = childScript("append-child.mjs");
    const seed = Date.now() % 100_000;
    const random = mulberry32(seed);
    const root = await tempDir();
    const created = SessionLog.create(new FsStore({ root }), { systemPrompt: "crash test", config: {} });
    const ref = created.ref;
    const path = new FsStore({ root }).segmentPath(ref);
    const committed = new Set<number>();
    let staleLocks = 0;
    let tornTails = 0;

    // Two writers load the package ahead of time (they only restore once told "go").
    const ready = [spawnWriter(script, root, ref.sessionId), spawnWriter(script, root, ref.sessionId)];
    for (let kill = 0; kill < KILLS; kill++) {
      const run = ready.shift() as ChildRun;
      await run.warm;
      ready.push(spawnWriter(script, root, ref.sessionId));
      run.child.stdin?.write("go\n");
      await run.waitForReports(1 + Math.floor(random() * 4));
      await new Promise((resolve) => setTimeout(resolve, random() * 10));
      run.child.kill("SIGKILL");
      await run.exited;
      for (const seq of run.reported) committed.add(seq);
      if (existsSync(`${path}.lock`)) staleLocks++;
      const raw = await readFile(path);
      if (raw.at(-1) !== 0x0a) tornTails++;

      // Restore succeeds and holds every entry the child reported, intact.
      const store = new FsStore({ root });
      const log = await SessionLog.open(store, ref.sessionId);
      expect(log.segmentId, `seed ${seed}, kill ${kill}`).toBe(ref.segmentId);
      const found = new Map<number, string>();
      for (const item of log.state.history) {
        const text = (item.content as { text: string }[])[0]?.text as string;
        found.set(seqOf(text) as number, text);
      }
      for (const seq of committed) {
        expect(found.get(seq), `seed ${seed}, kill ${kill}: entry ${seq}`).toBe(payloadOf(seq));
      }

      // Appending continues cleanly: the torn tail (if any) is cut and one whole line is added.
      const before = log.entryCount;
      log.append({ kind: "extension", domain: "crash-test", payload: { kill } });
      store.close();
      const after = (await readFile(path, "utf8")).split("\n");
      expect(after.pop()).toBe("");
      expect(JSON.parse(after.at(-1) as string)).toMatchObject({ kind: "extension", payload: { kill } });
      const counter = new FsStore({ root });
      expect(counter.entryCount(ref)).toBe(before + 1);
      counter.close();
    }
    for (const idle of ready) idle.child.kill("SIGKILL");
    await Promise.all(ready.map((idle) => idle.exited));
    expect(committed.size).toBeGreaterThan(KILLS);
    // The child appends under a held lease, so kills regularly leave a dead pid's lock behind.
    expect(staleLocks).toBeGreaterThan(0);
    console.log(
      `crash test (seed ${seed}): ${KILLS} kills, ${committed.size} reported entries, ` +
        `${staleLocks} stale locks taken over, ${tornTails} torn tails repaired`,
    );
  });
});
