import { readFile } from "node:fs/promises";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import { segmentHead } from "../../test/helpers/segment-head.js";
import { useTempDirs } from "../../test/helpers/temp-dir.js";
import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import { newId } from "../ids.js";
import { FsStore } from "./fs-store.js";

// Every pause yields here, as one does on any machine once a slice has held the event loop for
// `SLICE_MS`: how the rewrite is sliced no longer depends on how fast this machine copies 10 MB
// (a fast one finished it in 18 ms with one yield, from the poll phase straight into the check
// phase, and no timer ever ran).
const pauses = vi.hoisted(() => ({ count: 0 }));
vi.mock("../entry/time-slice.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../entry/time-slice.js")>();
  return {
    ...original,
    timeSlicer: () => () => {
      pauses.count++;
      return nextTurn().then(() => undefined);
    },
  };
});

const tempDir = useTempDirs();
const input = (text: string): Entry => ({ kind: "user_input", ts: 2, text });

describe("FsStore truncate of a long segment", () => {
  it("rewrites it in slices that let timers run, and an append of this process waits for it instead of slipping in", async () => {
    const store = new FsStore<MinimalItem>({ root: await tempDir() });
    const ref = { sessionId: newId(), segmentId: newId() };
    await store.createSegment(ref, [segmentHead(ref)]);
    const long = "z".repeat(10_000);
    for (let at = 0; at < 2_000; at += 200) {
      await store.append(
        ref,
        Array.from({ length: 200 }, (_, i) => input(`${at + i} ${long}`)),
      );
    }
    const other = new FsStore<MinimalItem>({ root: store.root });
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    pauses.count = 0;
    const truncated = store.truncate(ref, 1_000, { expectedCount: 2_001 });
    // Another store of this process appends at the count it last saw while the rewrite runs.
    const append = other.append(ref, [input("slipped in?")], { expectedCount: 2_001 });
    const order: string[] = [];
    await Promise.all([
      truncated.then(() => order.push("truncate")),
      append.then(() => order.push("append")),
    ]);
    clearInterval(ticking);
    expect(await truncated).toEqual({ status: "truncated", count: 1_000 });
    // It waited for the truncation, then found the segment changed: nothing of it was written.
    expect(order).toEqual(["truncate", "append"]);
    expect(await append).toEqual({ status: "drift", count: 1_000 });
    const entries: Entry[] = [];
    for await (const entry of store.readAll(ref)) entries.push(entry);
    expect(entries).toHaveLength(1_000);
    expect(entries.at(-1)).toMatchObject({ text: `998 ${long}` });
    // The 10 MB it keeps went out in 1 MB chunks with a pause after each (and the count of lines
    // to keep in slices before them), and timers ran in between.
    expect(pauses.count).toBeGreaterThanOrEqual(10);
    expect(turns).toBeGreaterThan(1);
    expect((await readFile(store.segmentPath(ref))).length).toBeLessThan(11_000_000);
    await other.close();
    await store.close();
  });
});
