import { type ChildProcess, spawn } from "node:child_process";
import { readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConsolidationLock, TORN_LOCK_GRACE_MS } from "../src/consolidate/consolidation-lock.js";
import { memoryPaths } from "../src/records/layout.js";
import { useTempDirs, writeFiles } from "./helpers.js";

const tempDir = useTempDirs();

/** A workspace whose staging directory exists; the lock lives there. */
async function lockIn(label: string): Promise<{ workspace: string; lockFile: string }> {
  const workspace = await tempDir(label);
  await writeFiles(workspace, { ".podkit/memory/_staging/.keep": "" });
  return { workspace, lockFile: memoryPaths(workspace).lockFile };
}

describe("taking the consolidation lock", () => {
  it("an empty lock file just created (a writer between create and write) counts as held", async () => {
    const { workspace, lockFile } = await lockIn("lock");
    await writeFile(lockFile, "");
    const attempt = await ConsolidationLock.acquire(workspace, lockFile, ["a"], new Date());
    expect(attempt.acquired).toBe(false);
    expect(await readFile(lockFile, "utf8")).toBe("");
  });

  it("a torn lock file older than the grace period is stale and taken over", async () => {
    const { workspace, lockFile } = await lockIn("lock");
    await writeFile(lockFile, '{"pid": 12');
    const old = new Date(Date.now() - 2 * TORN_LOCK_GRACE_MS);
    await utimes(lockFile, old, old);
    const attempt = await ConsolidationLock.acquire(workspace, lockFile, ["a"], new Date());
    expect(attempt.acquired).toBe(true);
    expect(JSON.parse(await readFile(lockFile, "utf8"))).toMatchObject({
      pid: process.pid,
      staging_ids: ["a"],
    });
  });

  it("the lock file is never seen half-written: it appears with the whole record", async () => {
    const { workspace, lockFile } = await lockIn("lock");
    const attempt = await ConsolidationLock.acquire(workspace, lockFile, ["a", "b"], new Date());
    expect(attempt.acquired).toBe(true);
    expect(JSON.parse(await readFile(lockFile, "utf8"))).toMatchObject({ staging_ids: ["a", "b"] });
  });
});

describe("processes racing for the consolidation lock", () => {
  const RACERS = 6;
  const ROUNDS = 4;

  function racer(
    workspace: string,
    lockFile: string,
    goFile: string,
  ): { child: ChildProcess; ready: Promise<void>; result: Promise<{ acquired: boolean }> } {
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, "fixtures/lock-child.mjs"), workspace, lockFile, goFile],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    let out = "";
    let onReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      onReady = resolve;
    });
    const result = new Promise<{ acquired: boolean }>((resolve, reject) => {
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("READY\n")) onReady();
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line !== undefined) resolve(JSON.parse(line));
      });
      child.on("exit", (code) => reject(new Error(`racer exited early (${code})`)));
    });
    return { child, ready, result };
  }

  it("exactly one of several processes started together gets it, round after round", {
    timeout: 120_000,
  }, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { workspace, lockFile } = await lockIn("race");
      const goFile = join(workspace, "go");
      const racers = Array.from({ length: RACERS }, () => racer(workspace, lockFile, goFile));
      try {
        await Promise.all(racers.map((r) => r.ready));
        await writeFile(goFile, "");
        const results = await Promise.all(racers.map((r) => r.result));
        expect(results.filter((r) => r.acquired)).toHaveLength(1);
        const holder = JSON.parse(await readFile(lockFile, "utf8"));
        const winner = racers[results.findIndex((r) => r.acquired)];
        expect(holder.pid).toBe(winner?.child.pid);
      } finally {
        await Promise.all(
          racers.map(async ({ child }) => {
            const exited = new Promise((resolve) => child.on("exit", resolve));
            child.stdin?.end();
            await exited;
          }),
        );
      }
    }
  });
});
