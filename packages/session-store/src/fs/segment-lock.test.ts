import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readFile, utimes, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../test/helpers/temp-dir.js";
import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import { LockTimeoutError } from "../errors.js";
import { newId } from "../ids.js";
import { FsStore, type FsStoreOptions } from "./fs-store.js";

const tempDir = useTempDirs();
const input = (text: string): Entry => ({ kind: "user_input", ts: 2, text });

async function segment(options: Partial<FsStoreOptions<MinimalItem>> = {}) {
  const store = new FsStore<MinimalItem>({ root: await tempDir(), ...options });
  const ref = { sessionId: newId(), segmentId: newId() };
  store.createSegment(ref, [
    {
      kind: "segment_start",
      ts: 1,
      v: 1,
      session_id: ref.sessionId,
      segment_id: ref.segmentId,
      system_prompt: null,
      config: {},
      history: [],
    },
  ]);
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
    store.append(ref, [input("a")]);
    expect(readFileSync(lock, "utf8")).toBe(`${process.pid}\n`);
    await tick();
    expect(existsSync(lock)).toBe(false);
    store.close();
  });

  it("keeps the lease across ticks while appends keep coming and releases it after the linger", async () => {
    const { store, ref, lock } = await segment({ lockLingerMs: 40 });
    store.append(ref, [input("a")]);
    await tick();
    store.append(ref, [input("b")]);
    expect(existsSync(lock)).toBe(true);
    while (existsSync(lock)) await new Promise((resolve) => setTimeout(resolve, 5));
    store.append(ref, [input("c")]);
    store.close();
    expect(existsSync(lock)).toBe(false);
  });

  it("takes over a stale lock left by a process that no longer exists", async () => {
    const { store, ref, lock } = await segment({ lockLingerMs: 0 });
    const dead = node("");
    await exited(dead);
    await writeFile(lock, `${dead.pid}\n`);
    expect(store.append(ref, [input("after takeover")])).toEqual({ status: "appended", count: 2 });
    expect(readFileSync(lock, "utf8")).toBe(`${process.pid}\n`);
    store.close();
  });

  it("takes over an old lock file without a pid, but waits on a fresh one", async () => {
    const { store, ref, lock } = await segment({
      lockLingerMs: 0,
      staleEmptyLockMs: 500,
      lockTimeoutMs: 100,
    });
    await writeFile(lock, "");
    expect(() => store.append(ref, [input("x")])).toThrow(LockTimeoutError);
    const old = new Date(Date.now() - 5_000);
    await utimes(lock, old, old);
    expect(store.append(ref, [input("x")])).toEqual({ status: "appended", count: 2 });
    store.close();
  });

  it("gives up on a lock held by a live process with an error naming the lock file and pid", async () => {
    const { store, ref, lock, path } = await segment({ lockTimeoutMs: 150 });
    const holder = node("setInterval(() => {}, 1000); console.log('up')");
    await firstLine(holder);
    await writeFile(lock, `${holder.pid}\n`);
    const before = await readFile(path);
    try {
      const error = (() => {
        try {
          store.append(ref, [input("blocked")]);
        } catch (e) {
          return e;
        }
      })();
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
    const { store, ref, lock } = await segment({ lockLingerMs: 0, lockTimeoutMs: 2_000 });
    // A live process whose pid sits in the request file but that never takes the lock
    // (e.g. a pid reused after a reboot).
    const bystander = node("setInterval(() => {}, 1000); console.log('up')");
    await firstLine(bystander);
    try {
      await writeFile(`${lock}.want`, `${bystander.pid}\n`);
      expect(store.append(ref, [input("not starved")])).toEqual({ status: "appended", count: 2 });
      expect(existsSync(`${lock}.want`)).toBe(false);
    } finally {
      bystander.kill("SIGKILL");
      await exited(bystander);
    }
    const dead = node("");
    await exited(dead);
    await tick();
    await writeFile(`${lock}.want`, `${dead.pid}\n`);
    expect(store.append(ref, [input("dead requester ignored")])).toEqual({ status: "appended", count: 3 });
    store.close();
  });

  it("waits for a live holder to release the lock, then appends", async () => {
    const { store, ref, lock, path } = await segment();
    const released = `${path}.released`;
    const holder = node(
      `const fs = require("node:fs");
       const [lock, released] = process.argv.slice(1);
       fs.writeFileSync(lock, process.pid + "\\n", { flag: "wx" });
       console.log("locked");
       setTimeout(() => { fs.writeFileSync(released, "released"); fs.unlinkSync(lock); }, 300);`,
      [lock, released],
    );
    expect(await firstLine(holder)).toBe("locked");
    expect(store.append(ref, [input("waited")])).toEqual({ status: "appended", count: 2 });
    // The holder writes the marker before it unlinks the lock: the append ran after the release.
    expect(await readFile(released, "utf8")).toBe("released");
    await exited(holder);
    store.close();
  });
});
