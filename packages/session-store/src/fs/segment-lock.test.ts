import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readFile, utimes, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { segmentHead } from "../../test/helpers/segment-head.js";
import { useTempDirs } from "../../test/helpers/temp-dir.js";
import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import { LockTimeoutError } from "../errors.js";
import { newId } from "../ids.js";
import { FsStore, type FsStoreOptions } from "./fs-store.js";
import { isProcessAlive, processState } from "./segment-lock.js";

const tempDir = useTempDirs();
const input = (text: string): Entry => ({ kind: "user_input", ts: 2, text });

async function segment(options: Partial<FsStoreOptions<MinimalItem>> = {}) {
  const store = new FsStore<MinimalItem>({ root: await tempDir(), ...options });
  const ref = { sessionId: newId(), segmentId: newId() };
  await store.createSegment(ref, [segmentHead(ref, null)]);
  const path = store.segmentPath(ref);
  return { store, ref, path, lock: `${path}.lock` };
}

function node(script: string, args: string[] = []): ChildProcess {
  return spawn(process.execPath, ["-e", script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => child.once("exit", resolve));
}

async function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve) =>
    child.stdout?.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())),
  );
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("segment append lock", () => {
  it("holds a lock file with this process's pid while appending and removes it when the lease ends", async () => {
    const { store, ref, lock } = await segment({ lockLingerMs: 0 });
    await store.append(ref, [input("a")]);
    expect(readFileSync(lock, "utf8")).toBe(`${process.pid}\n`);
    await tick();
    expect(existsSync(lock)).toBe(false);
    store.close();
  });

  it("keeps the lease across ticks while appends keep coming and releases it after the linger", async () => {
    const { store, ref, lock } = await segment({ lockLingerMs: 40 });
    await store.append(ref, [input("a")]);
    await tick();
    await store.append(ref, [input("b")]);
    expect(existsSync(lock)).toBe(true);
    while (existsSync(lock)) await new Promise((resolve) => setTimeout(resolve, 5));
    await store.append(ref, [input("c")]);
    store.close();
    expect(existsSync(lock)).toBe(false);
  });

  it("takes over a stale lock left by a process that no longer exists", async () => {
    const { store, ref, lock } = await segment({ lockLingerMs: 0 });
    const dead = node("");
    await exited(dead);
    await writeFile(lock, `${dead.pid}\n`);
    expect(await store.append(ref, [input("after takeover")])).toEqual({ status: "appended", count: 2 });
    expect(readFileSync(lock, "utf8")).toBe(`${process.pid}\n`);
    store.close();
  });

  it("takes over an old lock file without a pid, but waits on a fresh one", async () => {
    // "Fresh" must outlast the wait by far: on a busy machine the lock can age for a while
    // between being written and being looked at.
    const { store, ref, lock } = await segment({
      lockLingerMs: 0,
      staleEmptyLockMs: 60_000,
      lockTimeoutMs: 100,
    });
    await writeFile(lock, "");
    await expect(store.append(ref, [input("x")])).rejects.toThrow(LockTimeoutError);
    const old = new Date(Date.now() - 120_000);
    await utimes(lock, old, old);
    expect(await store.append(ref, [input("x")])).toEqual({ status: "appended", count: 2 });
    store.close();
  });

  it("gives up on a lock held by a live process with an error naming the lock file and pid", async () => {
    const { store, ref, lock, path } = await segment({ lockTimeoutMs: 150 });
    const holder = node("setInterval(() => {}, 1000); console.log('up')");
    await firstLine(holder);
    await writeFile(lock, `${holder.pid}\n`);
    const before = await readFile(path);
    try {
      const error = await store.append(ref, [input("blocked")]).catch((e: unknown) => e);
      expect(LockTimeoutError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ lockFile: lock, holderPid: holder.pid });
      expect((error as Error).message).toContain(`segment is locked by process ${holder.pid}`);
      expect((error as Error).message).toContain("delete the lock file");
      expect(await readFile(path)).toEqual(before);
    } finally {
      holder.kill("SIGKILL");
      await exited(holder);
    }
    store.close();
  });

  it("does not wait forever on a hand-over request nobody will take up", async () => {
    // The timeout only bounds the failure: the request is dropped after a grace of 200 ms.
    const { store, ref, lock } = await segment({ lockLingerMs: 0, lockTimeoutMs: 10_000 });
    // A live process whose pid sits in the request file but that never takes the lock
    // (e.g. a pid reused after a reboot).
    const bystander = node("setInterval(() => {}, 1000); console.log('up')");
    await firstLine(bystander);
    try {
      await writeFile(`${lock}.want`, `${bystander.pid}\n`);
      expect(await store.append(ref, [input("not starved")])).toEqual({ status: "appended", count: 2 });
      expect(existsSync(`${lock}.want`)).toBe(false);
    } finally {
      bystander.kill("SIGKILL");
      await exited(bystander);
    }
    const dead = node("");
    await exited(dead);
    await tick();
    await writeFile(`${lock}.want`, `${dead.pid}\n`);
    expect(await store.append(ref, [input("dead requester ignored")])).toEqual({
      status: "appended",
      count: 3,
    });
    store.close();
  });

  it("waits for a live holder without blocking the event loop, then appends", async () => {
    const { store, ref, lock, path } = await segment();
    const released = `${path}.released`;
    const holder = node(
      `const fs = require("node:fs");
       const [lock, released] = process.argv.slice(1);
       fs.writeFileSync(lock, process.pid + "\\n", { flag: "wx" });
       console.log("locked");
       setTimeout(() => { fs.writeFileSync(released, "released"); fs.unlinkSync(lock); }, 400);`,
      [lock, released],
    );
    expect(await firstLine(holder)).toBe("locked");
    // A 1 ms timer keeps ticking while the append waits; its longest gap is how long the event
    // loop stood still (reported, not asserted: timing is for the bench, not for tests).
    let ticks = 0;
    let longestGap = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 1);
    const appended = store.append(ref, [input("waited")]);
    const ticksAtStart = ticks;
    expect(await appended).toEqual({ status: "appended", count: 2 });
    clearInterval(timer);
    // A blocking wait (Atomics.wait) returned before any timer could run.
    expect(ticks - ticksAtStart).toBeGreaterThan(0);
    console.log(
      `lock wait: ${ticks - ticksAtStart} timer ticks, longest event-loop gap ${longestGap.toFixed(1)} ms`,
    );
    // The holder writes the marker before it unlinks the lock: the append ran after the release.
    expect(await readFile(released, "utf8")).toBe("released");
    await exited(holder);
    store.close();
  });

  it("stops waiting when the signal aborts, with the signal's reason, and withdraws its request", async () => {
    const { store, ref, lock, path } = await segment({ lockTimeoutMs: 10_000 });
    const holder = node("setInterval(() => {}, 1000); console.log('up')");
    await firstLine(holder);
    await writeFile(lock, `${holder.pid}\n`);
    const before = await readFile(path);
    // Two appends of this process wait for the lock; the second queues behind the first.
    const first = store.append(ref, [input("first")]);
    const controller = new AbortController();
    const second = store.append(ref, [input("never")], { signal: controller.signal });
    while (!existsSync(`${lock}.want`)) await new Promise((resolve) => setTimeout(resolve, 2));
    const reason = new Error("user pressed Ctrl-C");
    controller.abort(reason);
    await expect(second).rejects.toBe(reason);
    expect(readFileSync(lock, "utf8")).toBe(`${holder.pid}\n`);
    expect(await readFile(path)).toEqual(before);
    // The first one is still waiting; once the holder dies it takes the lock over.
    holder.kill("SIGKILL");
    await exited(holder);
    expect(await first).toEqual({ status: "appended", count: 2 });
    expect(existsSync(`${lock}.want`)).toBe(false);

    // A lone waiter that aborts withdraws its hand-over request.
    const other = node("setInterval(() => {}, 1000); console.log('up')");
    await firstLine(other);
    store.close();
    await writeFile(lock, `${other.pid}\n`);
    const lone = new AbortController();
    const waiting = store.append(ref, [input("never either")], { signal: lone.signal });
    while (!existsSync(`${lock}.want`)) await new Promise((resolve) => setTimeout(resolve, 2));
    lone.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(existsSync(`${lock}.want`)).toBe(false);
    other.kill("SIGKILL");
    await exited(other);
    store.close();
  });

  it("treats a killed but not yet reaped (zombie) holder as dead", async () => {
    const { store, ref, lock } = await segment({ lockTimeoutMs: 3_000 });
    // The background `sleep 0.3` exits after its shell has exec'd into `sleep 30`, which never reaps it.
    const parent = spawn("sh", ["-c", "sleep 0.3 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const zombie = Number(await firstLine(parent));
      for (let state = processState(zombie); state !== "Z"; state = processState(zombie)) {
        if (state === undefined) throw new Error(`process ${zombie} vanished instead of becoming a zombie`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // Positive control: the plain liveness probe still finds the zombie.
      expect(() => process.kill(zombie, 0)).not.toThrow();
      expect(isProcessAlive(zombie)).toBe(false);
      await writeFile(lock, `${zombie}\n`);
      expect(await store.append(ref, [input("after a zombie")])).toEqual({ status: "appended", count: 2 });
      expect(readFileSync(lock, "utf8")).toBe(`${process.pid}\n`);
    } finally {
      parent.kill("SIGKILL");
      await exited(parent);
    }
    store.close();
  });
});
