import * as nodeFs from "node:fs";
import { appendFile, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { segmentHead } from "../../test/helpers/segment-head.js";
import { useTempDirs } from "../../test/helpers/temp-dir.js";
import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import { frameLine } from "../entry/line-frame.js";
import {
  AppendFailedError,
  CorruptEntryError,
  InvalidEntryError,
  NotFoundError,
  SessionStoreUsageError,
} from "../errors.js";
import { newId } from "../ids.js";
import { restoreSession } from "../log/session-log.js";
import type { SegmentRef } from "../store/store.js";
import { FsStore, type FsStoreOptions, sessionsRoot } from "./fs-store.js";
import type { SyncFs } from "./sync-fs.js";

const tempDir = useTempDirs();

const input = (text: string): Entry => ({ kind: "user_input", ts: 2, text });

async function readAllOf(store: FsStore, ref: SegmentRef): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of store.readAll(ref)) out.push(entry);
  return out;
}

/**
 * A store with one new segment. A `frozen` ref is what a `SessionLog` passes: the store then
 * remembers the segment and lease of its last append and renews them without look-ups.
 */
async function newSegment(options: Partial<FsStoreOptions<MinimalItem>> = {}, frozen = false) {
  const root = await tempDir();
  const store = new FsStore<MinimalItem>({ root, ...options });
  const plain = { sessionId: newId(), segmentId: newId() };
  const ref = frozen ? Object.freeze(plain) : plain;
  await store.createSegment(ref, [segmentHead(ref)]);
  return { root, store, ref, path: store.segmentPath(ref) };
}

describe("FsStore layout and listing", () => {
  it("stores a segment at <workspace>/.podkit/sessions/<session>/<segment>.jsonl", async () => {
    const workspace = await tempDir();
    const store = new FsStore({ root: sessionsRoot(workspace) });
    const ref = { sessionId: newId(), segmentId: newId() };
    await store.createSegment(ref, [segmentHead(ref)]);
    const text = await readFile(
      join(workspace, ".podkit", "sessions", ref.sessionId, `${ref.segmentId}.jsonl`),
      "utf8",
    );
    expect(text).toBe(`${frameLine(JSON.stringify(segmentHead(ref)), 0)}\n`);
    store.close();
  });

  it("lists sessions and segments newest first and finds the session of a segment", async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const [s1, s2] = [newId(), newId()];
    const [a, b, c] = [newId(), newId(), newId()];
    for (const ref of [
      { sessionId: s1, segmentId: a },
      { sessionId: s2, segmentId: b },
      { sessionId: s1, segmentId: c },
    ]) {
      await store.createSegment(ref, [segmentHead(ref)]);
    }
    await writeFile(join(root, s1, `${a}.jsonl.lock`), "1\n");
    await writeFile(join(root, s1, "notes.txt"), "x");
    expect(await store.listSessions()).toEqual([s2, s1]);
    expect(await store.listSegments(s1)).toEqual([c, a]);
    expect(await store.lookupSessionOf(b)).toBe(s2);
    expect(await store.lookupSessionOf(newId())).toBeUndefined();
    await expect(store.listSegments(newId())).rejects.toThrow(NotFoundError);
    expect(await new FsStore({ root: join(root, "missing") }).listSessions()).toEqual([]);
  });

  it("rejects ids that could escape the store directory", async () => {
    const store = new FsStore({ root: await tempDir() });
    const ref = { sessionId: "..", segmentId: "x" };
    await expect(store.createSegment(ref, [segmentHead(ref)])).rejects.toThrow(SessionStoreUsageError);
    expect(() => store.segmentPath({ sessionId: "a/b", segmentId: "c" })).toThrow(
      /invalid session id "a\/b"/,
    );
  });

  it("creates a segment atomically and never replaces an existing one", async () => {
    const { store, ref, path } = await newSegment();
    await expect(store.createSegment(ref, [segmentHead(ref)])).rejects.toThrow(/already exists/);
    expect(await readdir(join(path, ".."))).toEqual([`${ref.segmentId}.jsonl`]);
    const other = { sessionId: ref.sessionId, segmentId: newId() };
    await expect(store.createSegment(other, [input("no head")])).rejects.toThrow(
      /must begin with a segment_start/,
    );
    store.close();
  });
});

describe("FsStore append and read", () => {
  it("appends entries as newline-terminated JSON lines and streams them back", async () => {
    const { store, ref, path } = await newSegment();
    expect(await store.append(ref, [input("one")])).toEqual({ status: "appended", count: 2 });
    expect(await store.append(ref, [input("two"), input("three")])).toEqual({ status: "appended", count: 4 });
    expect(await store.entryCount(ref)).toBe(4);
    const entries = await readAllOf(store, ref);
    expect(entries.map((e) => (e.kind === "user_input" ? e.text : e.kind))).toEqual([
      "segment_start",
      "one",
      "two",
      "three",
    ]);
    const lines = (await readFile(path, "utf8")).split("\n");
    expect(lines.at(-1)).toBe("");
    // Format v2: each line is the entry's JSON plus its sequence number and checksum.
    expect(lines.slice(0, -1)).toEqual(entries.map((entry, seq) => frameLine(JSON.stringify(entry), seq)));
    expect(JSON.parse(lines[1] as string)).toEqual({
      ...input("one"),
      seq: 1,
      crc: expect.stringMatching(/^[0-9a-f]{8}$/),
    });
    store.close();
  });

  it("streams a segment larger than the read chunk, including a line longer than it", async () => {
    const { store, ref } = await newSegment();
    const long = "ß".repeat(700_000); // 1.4 MB of two-byte characters in one line
    await store.append(ref, [input("a"), input(long), input("b")]);
    for (let i = 0; i < 3000; i++) await store.append(ref, [input(`entry ${i} — ü`)]);
    const entries = await readAllOf(store, ref);
    expect(entries).toHaveLength(3004);
    expect(entries[2]).toEqual(input(long));
    expect(entries[3003]).toEqual(input("entry 2999 — ü"));
    store.close();
  });

  it("ignores a torn multi-byte UTF-8 tail on read and cuts it before the next append", async () => {
    const { store, ref, path } = await newSegment({ lockLingerMs: 0 });
    await store.append(ref, [input("committed")]);
    const committed = await readFile(path);
    // A record cut in the middle of "日" (E6 97 A5): two of its three bytes, no newline.
    const torn = Buffer.concat([
      Buffer.from('{"kind":"user_input","ts":3,"text":"'),
      Buffer.from("日").subarray(0, 2),
    ]);
    await appendFile(path, torn);

    const fresh = new FsStore({ root: store.root });
    expect((await readAllOf(fresh, ref)).map((e) => e.kind)).toEqual(["segment_start", "user_input"]);
    expect(await fresh.entryCount(ref)).toBe(2);
    expect(await readFile(path)).toEqual(Buffer.concat([committed, torn]));

    await new Promise((resolve) => setImmediate(resolve)); // let the first store's lock go
    expect(await store.append(ref, [input("日本語 after repair")])).toEqual({ status: "appended", count: 3 });
    const expected = Buffer.concat([
      committed,
      Buffer.from(`${frameLine(JSON.stringify(input("日本語 after repair")), 2)}\n`),
    ]);
    expect(await readFile(path)).toEqual(expected);
    expect((await readAllOf(fresh, ref)).at(-1)).toEqual(input("日本語 after repair"));
    store.close();
    fresh.close();
  });

  it.each([
    ["a plain ref", false],
    ["a frozen ref (the remembered segment and lease)", true],
  ])(
    "throws CorruptEntryError with the line number for a newline-terminated garbage line (%s)",
    async (_, frozen) => {
      // A long linger keeps the lease across the stray write however slow the machine is.
      const { store, ref, path } = await newSegment({ lockLingerMs: 60_000 }, frozen);
      await store.append(ref, [input("fine")]);
      const fine = await readFile(path);
      await appendFile(path, "garbage}\n");
      // Still under the lease of the first append: only the probe can notice the stray line.
      expect(await store.append(ref, [input("after")])).toEqual({ status: "appended", count: 4 });
      expect((await readFile(path)).subarray(0, fine.length + 9)).toEqual(
        Buffer.concat([fine, Buffer.from("garbage}\n")]),
      );
      const error = await readAllOf(store, ref).catch((e: unknown) => e);
      expect(CorruptEntryError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ file: path, line: 3 });
      expect((error as Error).message).toContain(`${path}:3: corrupt session log entry: no `);
      // A restore surfaces it too instead of resuming from a silently shortened history.
      await expect(restoreSession(store, ref.sessionId)).rejects.toMatchObject({
        name: "CorruptEntryError",
        line: 3,
      });
      store.close();
    },
  );

  it("positive control: with the probe blinded, the next append of a lease overwrites a stray line", async () => {
    // The 1-byte read past the committed end is the store's only check while it holds the lease;
    // a store whose probe always sees the end shows what that check prevents.
    const blind: SyncFs = {
      ...nodeFs,
      readSync: ((fd: number, buffer: Buffer, offset: number, length: number, position: number | null) =>
        length === 1 ? 0 : nodeFs.readSync(fd, buffer, offset, length, position)) as typeof nodeFs.readSync,
    };
    const { store, ref, path } = await newSegment({ fs: blind, lockLingerMs: 60_000 }, true);
    await store.append(ref, [input("fine")]);
    await appendFile(path, "garbage}\n");
    expect(await store.append(ref, [input("after")])).toEqual({ status: "appended", count: 3 });
    expect(await readFile(path, "utf8")).not.toContain("garbage");
    store.close();
  });

  it("refuses an invalid entry before touching the file", async () => {
    const { store, ref, path } = await newSegment();
    const before = await readFile(path);
    const bad = { kind: "turn_end", ts: 1, turn: -1 } as Entry;
    await expect(store.append(ref, [bad])).rejects.toThrow(InvalidEntryError);
    expect(await readFile(path)).toEqual(before);
    store.close();
  });

  it("reports drift instead of writing when the expected entry count does not match", async () => {
    const { store, ref, path } = await newSegment();
    await store.append(ref, [input("a")]);
    const before = await readFile(path);
    expect(await store.append(ref, [input("b")], { expectedCount: 1 })).toEqual({
      status: "drift",
      count: 2,
    });
    expect(await readFile(path)).toEqual(before);
    expect(await store.append(ref, [input("b")], { expectedCount: 2 })).toEqual({
      status: "appended",
      count: 3,
    });
    store.close();
  });

  it.each([
    ["a plain ref", false],
    ["a frozen ref (the remembered segment and lease)", true],
  ])("sees appends made through another store instance in the same process (%s)", async (_, frozen) => {
    const { store, ref } = await newSegment({}, frozen);
    const other = new FsStore({ root: store.root });
    for (let i = 0; i < 10; i++) {
      await store.append(ref, [input(`a${i}`)], { expectedCount: 1 + 2 * i });
      await other.append(ref, [input(`b${i}`)], { expectedCount: 2 + 2 * i });
    }
    expect(await store.append(ref, [input("late")], { expectedCount: 20 })).toEqual({
      status: "drift",
      count: 21,
    });
    expect(await readAllOf(store, ref)).toHaveLength(21);
    store.close();
    other.close();
  });

  it("keeps every segment writable when it writes to more segments than it keeps open", async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const refs = Array.from({ length: 20 }, () => ({ sessionId: newId(), segmentId: newId() }));
    for (const ref of refs) await store.createSegment(ref, [segmentHead(ref)]);
    for (let round = 0; round < 3; round++) {
      for (const ref of refs) {
        expect((await store.append(ref, [input(`r${round}`)], { expectedCount: 1 + round })).status).toBe(
          "appended",
        );
      }
    }
    for (const ref of refs) expect(await readAllOf(store, ref)).toHaveLength(4);
    store.close();
  });

  it("reports a missing segment as NotFoundError", async () => {
    const { store, ref } = await newSegment();
    const missing = { sessionId: ref.sessionId, segmentId: newId() };
    await expect(store.append(missing, [input("x")])).rejects.toThrow(NotFoundError);
    await expect(readAllOf(store, missing)).rejects.toThrow(NotFoundError);
    await expect(store.append({ sessionId: newId(), segmentId: newId() }, [input("x")])).rejects.toThrow(
      NotFoundError,
    );
    store.close();
  });
});

describe("FsStore write failures", () => {
  /** The real file system, except that the next data write lands half of its bytes and then fails. */
  function failingHalfWrite(): SyncFs & { arm(): void } {
    let armed = false;
    return {
      ...nodeFs,
      arm: () => {
        armed = true;
      },
      writeSync: ((fd: number, buffer: Buffer, offset: number, length: number, position: number) => {
        if (!armed || typeof buffer === "string") {
          return (nodeFs.writeSync as (...args: unknown[]) => number)(fd, buffer, offset, length, position);
        }
        armed = false;
        nodeFs.writeSync(fd, buffer, offset, Math.floor(length / 2), position);
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      }) as SyncFs["writeSync"],
    };
  }

  it("rolls the file back to its previous length when a write fails midway", async () => {
    const fs = failingHalfWrite();
    const { store, ref, path } = await newSegment({ fs });
    await store.append(ref, [input("before")]);
    const before = await readFile(path);
    fs.arm();
    const error = await store.append(ref, [input("x".repeat(5000))]).catch((e: unknown) => e);
    expect(AppendFailedError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/ENOSPC.*rolled back/);
    expect((error as Error).cause).toMatchObject({ code: "ENOSPC" });
    expect(await readFile(path)).toEqual(before);
    expect(await store.append(ref, [input("after")])).toEqual({ status: "appended", count: 3 });
    expect((await readAllOf(store, ref)).map((e) => e.kind === "user_input" && e.text)).toEqual([
      false,
      "before",
      "after",
    ]);
    store.close();
  });

  it("treats a short write as a failure and rolls it back", async () => {
    const fs: SyncFs = {
      ...nodeFs,
      writeSync: ((fd: number, buffer: Buffer, offset: number, length: number, position: number) => {
        if (typeof buffer === "string" || length < 100) {
          return (nodeFs.writeSync as (...args: unknown[]) => number)(fd, buffer, offset, length, position);
        }
        return nodeFs.writeSync(fd, buffer, offset, 10, position);
      }) as SyncFs["writeSync"],
    };
    const { store, ref, path } = await newSegment({ fs });
    const before = await readFile(path);
    await expect(store.append(ref, [input("y".repeat(200))])).rejects.toThrow(/short write: 10 of \d+ bytes/);
    expect(await readFile(path)).toEqual(before);
    store.close();
  });

  it("flushes appends and whole-file writes when durability is fsync", async () => {
    const synced: number[] = [];
    const fs: SyncFs = {
      ...nodeFs,
      fsyncSync: (fd) => {
        synced.push(fd);
        nodeFs.fsyncSync(fd);
      },
    };
    const { store, ref } = await newSegment({ fs, durability: "fsync" });
    expect(synced).toHaveLength(2); // the temp file, then its directory after the rename
    await store.append(ref, [input("durable")]);
    expect(synced).toHaveLength(3);
    const relaxed = await newSegment({ fs });
    await relaxed.store.append(relaxed.ref, [input("not flushed")]);
    expect(synced).toHaveLength(3);
    store.close();
    relaxed.store.close();
  });
});

describe("FsStore truncate", () => {
  it("keeps the first entries by writing a temp file and renaming it over the segment", async () => {
    const { store, ref, path } = await newSegment();
    for (const text of ["a", "b", "c"]) await store.append(ref, [input(text)]);
    const inodeBefore = (await stat(path)).ino;
    expect(await store.truncate(ref, 2, { expectedCount: 4 })).toEqual({ status: "truncated", count: 2 });
    expect((await stat(path)).ino).not.toBe(inodeBefore);
    // No temp file is left behind (the lease's lock file may or may not have lingered).
    expect((await readdir(join(path, ".."))).filter((name) => !name.endsWith(".lock"))).toEqual([
      `${ref.segmentId}.jsonl`,
    ]);
    expect((await readAllOf(store, ref)).map((e) => e.kind)).toEqual(["segment_start", "user_input"]);
    expect(await store.append(ref, [input("d")], { expectedCount: 2 })).toEqual({
      status: "appended",
      count: 3,
    });
    store.close();
  });

  it("leaves the segment alone when its entry count drifted or the cut is out of range", async () => {
    const { store, ref, path } = await newSegment();
    await store.append(ref, [input("a")]);
    const before = await readFile(path);
    expect(await store.truncate(ref, 1, { expectedCount: 5 })).toEqual({ status: "drift", count: 2 });
    await expect(store.truncate(ref, 0)).rejects.toThrow(/keep at least its segment_start/);
    await expect(store.truncate(ref, 3)).rejects.toThrow(SessionStoreUsageError);
    expect(await readFile(path)).toEqual(before);
    store.close();
  });

  it("makes another process-local store reopen the replaced file before its next append", async () => {
    const { store, ref } = await newSegment({ lockLingerMs: 0 });
    const other = new FsStore({ root: store.root, lockLingerMs: 0 });
    await other.append(ref, [input("a")]);
    await other.append(ref, [input("b")]);
    await new Promise((resolve) => setImmediate(resolve));
    await store.truncate(ref, 2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await other.append(ref, [input("c")], { expectedCount: 3 })).toEqual({
      status: "drift",
      count: 2,
    });
    await other.append(ref, [input("c")], { expectedCount: 2 });
    expect((await readAllOf(store, ref)).map((e) => (e.kind === "user_input" ? e.text : "-"))).toEqual([
      "-",
      "a",
      "c",
    ]);
    store.close();
    other.close();
  });
});

describe("FsStore with a custom item schema", () => {
  it("validates items on write and on read", async () => {
    const root = await tempDir();
    const itemSchema = z.object({ type: z.literal("message"), role: z.enum(["user", "assistant"]) });
    const store = new FsStore({ root, itemSchema });
    const ref = { sessionId: newId(), segmentId: newId() };
    await store.createSegment(ref, [segmentHead(ref) as Entry<z.infer<typeof itemSchema>>]);
    await expect(
      store.append(ref, [
        { kind: "assistant_item", ts: 1, item: { type: "message", role: "robot" } as never },
      ]),
    ).rejects.toThrow(/item\.role/);
    await mkdir(join(root, ref.sessionId), { recursive: true });
    await appendFile(
      store.segmentPath(ref),
      '{"kind":"assistant_item","ts":1,"item":{"type":"reasoning"}}\n',
    );
    const error = await (async () => {
      for await (const _ of store.readAll(ref)) {
      }
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ line: 2 });
    store.close();
  });
});
