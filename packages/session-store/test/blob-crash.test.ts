import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { FsStore } from "../src/fs/fs-store.js";
import { blobFiles } from "./helpers/blob-files.js";
import { spawnChild } from "./helpers/children.js";
import { mulberry32 } from "./helpers/seeded-random.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();

/**
 * A writer of `mode` killed with SIGKILL a random moment into its puts: the digests it reported
 * stored, and what it left in the blob directories.
 */
async function killMidPut(mode: "store" | "naive", root: string, delayMs: number) {
  const child = spawnChild("blob-put-child.mjs", [mode, root]);
  expect(await child.next()).toBe("ready");
  const done: string[] = [];
  child.child.stdout?.on("data", (chunk: Buffer) => {
    for (const match of chunk.toString("utf8").matchAll(/^done (\S+)$/gm)) done.push(match[1] as string);
  });
  child.send("go");
  await sleep(delayMs);
  child.child.kill("SIGKILL");
  await child.exited;
  return { done, files: await blobFiles(root) };
}

describe("a put killed midway (FsStore)", () => {
  it("never leaves a partial blob under a digest, only a temp file the garbage collection removes", {
    timeout: 180_000,
  }, async () => {
    const random = mulberry32(42);
    // Positive control: bytes written straight to the digest's path leave a partial blob there
    // when the writer dies mid-write, which a reader would take for the file's content.
    let partial = 0;
    for (let round = 0; round < 40 && partial === 0; round++) {
      const { files } = await killMidPut("naive", await tempDir(), 60 + Math.floor(random() * 240));
      partial += files.broken.length;
    }
    expect(partial).toBeGreaterThan(0);

    // At least 8 rounds, and on until two kills landed mid-write (most land in the hashing).
    let midWrite = 0;
    for (let round = 0; round < 40 && (round < 8 || midWrite < 2); round++) {
      const root = await tempDir();
      const { done, files } = await killMidPut("store", root, 60 + Math.floor(random() * 240));
      expect(files.broken, `round ${round}`).toEqual([]);
      // Every put that resolved is there, whole.
      for (const digest of done) expect(files.whole).toContain(digest);
      if (files.other.length > 0) midWrite++;
      expect(files.other.every((name) => /^[0-9a-f]{62}\.tmp-\d+-[0-9a-f]{8}$/.test(name))).toBe(true);
      // The temp file is debris: invisible to the store, removed once older than the grace period.
      const store = new FsStore({ root });
      const listed: string[] = [];
      for await (const digest of store.blobs.list()) listed.push(digest);
      expect(listed.sort()).toEqual([...files.whole].sort());
      expect(await store.blobs.removeDebris?.({ olderThanMs: 0 })).toHaveLength(files.other.length);
      expect((await blobFiles(root)).other).toEqual([]);
      await store.close();
    }
    // The kills really landed in the middle of writes, where a partial blob could have been left.
    expect(midWrite).toBeGreaterThan(0);
  });
});
