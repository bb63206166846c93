import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { FsStore } from "../src/fs/fs-store.js";
import { SessionLog } from "../src/log/session-log.js";
import { childScript } from "./helpers/built-package.js";
import { bigPayloadOf, payloadOf, seqOf } from "./helpers/payload.mjs";
import { mulberry32 } from "./helpers/seeded-random.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();
const KILLS = 120;
/** Every BIG_EVERY-th kill targets the middle of a 12 MB write. */
const BIG_EVERY = 8;

interface ChildRun {
  child: ChildProcess;
  reported: number[];
  /** Store appends that carried more than one entry (group commit at work). */
  batches: number;
  /** The large append announced last: its sequence number and the file size before it. */
  bigWrite: Promise<{ seq: number; sizeBefore: number }>;
  exited: Promise<void>;
  /** Resolves once the child has loaded the package and waits for "go". */
  warm: Promise<void>;
  waitForReports(n: number): Promise<void>;
}

/** Spawns a writer that loads the built package and waits for "go" on stdin before restoring. */
function spawnWriter(script: string, root: string, sessionId: string): ChildRun {
  const child = spawn(process.execPath, [script, root, sessionId], { stdio: ["pipe", "pipe", "pipe"] });
  const reported: number[] = [];
  let batches = 0;
  const stderr: string[] = [];
  let buffered = "";
  let onWarm: () => void = () => {};
  const warm = new Promise<void>((resolve) => {
    onWarm = resolve;
  });
  let waiter: { n: number; resolve: () => void } | undefined;
  let onBig: (big: { seq: number; sizeBefore: number }) => void = () => {};
  const bigWrite = new Promise<{ seq: number; sizeBefore: number }>((resolve) => {
    onBig = resolve;
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      if (line === "warm") onWarm();
      else if (/^\d+$/.test(line)) reported.push(Number(line));
      else if (line.startsWith("batch ")) batches++;
      else if (line.startsWith("big ")) {
        const [, seq, size] = line.split(" ");
        onBig({ seq: Number(seq), sizeBefore: Number(size) });
      }
    }
    if (waiter !== undefined && reported.length >= waiter.n) waiter.resolve();
  });
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    reported,
    get batches() {
      return batches;
    },
    bigWrite,
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

/** The last byte of a file, or undefined for an empty one. */
async function lastByte(path: string): Promise<number | undefined> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    if (size === 0) return undefined;
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, size - 1);
    return byte[0];
  } finally {
    await handle.close();
  }
}

describe("crash safety under SIGKILL", () => {
  it(`keeps every reported entry across ${KILLS} kills of a real appending process with group commit, some inside large writes`, {
    timeout: 400_000,
  }, async () => {
    const script = childScript("append-child.mjs");
    const seed = Date.now() % 100_000;
    const random = mulberry32(seed);
    const root = await tempDir();
    const created = await SessionLog.create(new FsStore({ root }), {
      systemPrompt: "crash test",
      config: {},
    });
    const ref = created.ref;
    const path = new FsStore({ root }).segmentPath(ref);
    const committed = new Set<number>();
    let staleLocks = 0;
    let tornTails = 0;
    let killsInsideWrites = 0;
    let groupCommits = 0;

    // Two writers load the package ahead of time (they only restore once told "go").
    const ready = [spawnWriter(script, root, ref.sessionId), spawnWriter(script, root, ref.sessionId)];
    for (let kill = 0; kill < KILLS; kill++) {
      const run = ready.shift() as ChildRun;
      await run.warm;
      ready.push(spawnWriter(script, root, ref.sessionId));
      const big = kill % BIG_EVERY === BIG_EVERY - 1;
      run.child.stdin?.write(big ? "go big\n" : "go\n");
      if (big) {
        // Kill as soon as the large write has started to land in the file.
        const { seq, sizeBefore } = await run.bigWrite;
        while ((await stat(path)).size <= sizeBefore && !run.reported.includes(seq)) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        if (!run.reported.includes(seq)) killsInsideWrites++;
      } else {
        await run.waitForReports(1 + Math.floor(random() * 4));
        await new Promise((resolve) => setTimeout(resolve, random() * 10));
      }
      run.child.kill("SIGKILL");
      await run.exited;
      for (const seq of run.reported) committed.add(seq);
      groupCommits += run.batches;
      if (existsSync(`${path}.lock`)) staleLocks++;
      if ((await lastByte(path)) !== 0x0a) tornTails++;

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
        const text = found.get(seq);
        const intact =
          text === payloadOf(seq) || (text !== undefined && text.length > 1e6 && text === bigPayloadOf(seq));
        expect(intact, `seed ${seed}, kill ${kill}: entry ${seq}`).toBe(true);
      }

      // Appending continues cleanly: the torn tail (if any) is cut and one whole line is added.
      const before = log.entryCount;
      await log.append({ kind: "extension", domain: "crash-test", payload: { kill } });
      await store.close();
      expect(await lastByte(path)).toBe(0x0a);
      const counter = new FsStore({ root });
      expect(await counter.entryCount(ref)).toBe(before + 1);
      await counter.close();
    }
    for (const idle of ready) idle.child.kill("SIGKILL");
    await Promise.all(ready.map((idle) => idle.exited));
    expect(committed.size).toBeGreaterThan(KILLS);
    // Group commit was on: appends fired together went out in shared writes.
    expect(groupCommits).toBeGreaterThan(KILLS / 2);
    // The child appends under a held lease, so kills regularly leave a dead pid's lock behind.
    expect(staleLocks).toBeGreaterThan(0);
    // Kills really landed inside writes, and each torn tail they left was repaired above.
    expect(killsInsideWrites).toBeGreaterThan(0);
    expect(tornTails).toBeGreaterThan(0);
    console.log(
      `crash test (seed ${seed}): ${KILLS} kills, ${committed.size} reported entries, ` +
        `${staleLocks} stale locks taken over, ${killsInsideWrites} kills inside a large write, ` +
        `${tornTails} torn tails repaired, ${groupCommits} shared writes`,
    );
  });
});
