import { open, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { Entry } from "../src/entry/entry-schema.js";
import { CorruptEntryError } from "../src/errors.js";
import { FsStore } from "../src/fs/fs-store.js";
import { SessionLog } from "../src/log/session-log.js";
import type { SegmentRef } from "../src/store/store.js";
import { spawnChild } from "./helpers/children.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();

async function readFrom(store: FsStore, ref: SegmentRef, from: number): Promise<Entry[]> {
  const entries: Entry[] = [];
  for await (const batch of store.readFrom(ref, from)) entries.push(...batch);
  return entries;
}

describe("FsStore.readFrom on a live segment", () => {
  it("follows a segment another process keeps appending to: each read gives exactly the entries since the last", {
    timeout: 120_000,
  }, async () => {
    const root = await tempDir();
    const log = await SessionLog.create(new FsStore({ root }), { systemPrompt: "live", config: {} });
    const writer = spawnChild("race-child.mjs", ["busy", root, log.sessionId, log.segmentId]);
    expect(await writer.next()).toBe("ready");
    writer.send("go");
    expect(await writer.next()).toBe("appending");
    const reader = new FsStore({ root });
    let seen = 1;
    let reads = 0;
    try {
      // At least three reads while the writer goes on, however fast it is next to this reader.
      while (seen < 3_000 || reads < 3) {
        const fresh = await readFrom(reader, log.ref, seen);
        // The busy writer appends `extension` entries whose payload counts from 0.
        expect(fresh.map((entry) => (entry.kind === "extension" ? entry.payload : entry.kind))).toEqual(
          fresh.map((_, i) => seen - 1 + i),
        );
        seen += fresh.length;
        reads++;
      }
    } finally {
      writer.child.kill("SIGKILL");
      await writer.exited;
    }
  });

  it("starts where it left off: damage before that point is not read again (a fresh reader trips over it)", async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const log = await SessionLog.create(store, { systemPrompt: "resume here", config: {} });
    await log.appendMany(
      Array.from({ length: 50 }, (_, i) => ({ kind: "user_input" as const, text: `m${i}` })),
    );
    expect(await readFrom(store, log.ref, 0)).toHaveLength(51);
    await log.appendMany([{ kind: "user_input", text: "after" }]);
    // Damage line 3 in place (same inode, same length): its newline becomes a space, so counting
    // lines from the top of the file now goes wrong by one.
    const path = store.segmentPath(log.ref);
    const text = await readFile(path, "latin1");
    const third = text.indexOf("\n", text.indexOf("\n", text.indexOf("\n") + 1) + 1);
    const handle = await open(path, "r+");
    await handle.write(Buffer.from(" "), 0, 1, third);
    await handle.close();

    const resumed = await readFrom(store, log.ref, 51);
    expect(resumed.map((entry) => entry.kind === "user_input" && entry.text)).toEqual(["after"]);
    // Positive control: a reader without that position counts lines from the top, is off by one
    // past the damage and misses the entry; reading the top itself fails on the damaged line.
    const fresh = new FsStore({ root });
    expect(
      (await readFrom(fresh, log.ref, 51)).map((entry) => entry.kind === "user_input" && entry.text),
    ).not.toEqual(["after"]);
    const fromTop = await readFrom(fresh, log.ref, 0).catch((error: unknown) => error);
    expect(CorruptEntryError.isInstance(fromTop)).toBe(true);
  });
});
