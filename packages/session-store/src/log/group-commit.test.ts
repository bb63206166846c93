import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../test/helpers/temp-dir.js";
import type { Entry, EntryInput, MinimalItem } from "../entry/entry-schema.js";
import { InvalidEntryError } from "../errors.js";
import { FsStore } from "../fs/fs-store.js";
import { appendNow, type SegmentRef } from "../store/store.js";
import { SessionLog } from "./session-log.js";

const tempDir = useTempDirs();

/**
 * A real FsStore that records how many entries each of its appends carried (`append` goes
 * through `appendNow`, which the log calls directly).
 */
class CountingStore extends FsStore<MinimalItem> {
  readonly appends: number[] = [];

  override [appendNow](
    ref: SegmentRef,
    entries: readonly Entry<MinimalItem>[],
    expectedCount: number | undefined,
    signal: AbortSignal | undefined,
  ) {
    this.appends.push(entries.length);
    return super[appendNow](ref, entries, expectedCount, signal);
  }
}

const input = (text: string): EntryInput<MinimalItem> => ({ kind: "user_input", text });

async function logOn(store: FsStore<MinimalItem>) {
  const log = await SessionLog.create(store, { systemPrompt: "group", config: {} });
  const texts = async () =>
    (await readFile(store.segmentPath(log.ref), "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string; text?: string })
      .flatMap((entry) => (entry.kind === "user_input" ? [entry.text] : []));
  return { log, texts };
}

describe("group commit in SessionLog", () => {
  it("appends fired while a write is in flight share the next write, each resolving with its own index", async () => {
    const store = new CountingStore({ root: await tempDir() });
    const { log, texts } = await logOn(store);
    const sent = Array.from({ length: 20 }, (_, i) => `m${i}`);
    const results = await Promise.all(sent.map((text) => log.append(input(text))));
    expect(results.map((result) => result.index)).toEqual(sent.map((_, i) => i + 1));
    // The first append went out at once (an idle log adds no wait); the other 19 queued behind it.
    expect(store.appends).toEqual([1, 19]);
    expect(await texts()).toEqual(sent);
    expect(log.entryCount).toBe(21);
    // One append after another (each awaited) is written alone, as before.
    await log.append(input("alone"));
    expect(store.appends).toEqual([1, 19, 1]);
  });

  it("an invalid entry in a shared write fails only its own append", async () => {
    const store = new CountingStore({ root: await tempDir() });
    const { log, texts } = await logOn(store);
    const first = log.append(input("first"));
    const bad = log.append({ kind: "turn_end", turn: "two" } as unknown as EntryInput<MinimalItem>);
    const after = log.append(input("after"));
    await first;
    await expect(bad).rejects.toSatisfy((error) => InvalidEntryError.isInstance(error));
    expect(await after).toMatchObject({ index: 2, driftFork: null });
    expect(await texts()).toEqual(["first", "after"]);
    // The batch was refused whole (nothing written), then written one append at a time.
    expect(store.appends).toEqual([1, 2, 1, 1]);
  });

  it("appends with different abort signals are not written together", async () => {
    const store = new CountingStore({ root: await tempDir() });
    const { log, texts } = await logOn(store);
    const [a, b] = [new AbortController().signal, new AbortController().signal];
    await Promise.all([
      log.append(input("a0"), { signal: a }),
      log.append(input("a1"), { signal: a }),
      log.append(input("a2"), { signal: a }),
      log.append(input("b0"), { signal: b }),
      log.append(input("b1"), { signal: b }),
      log.append(input("none")),
    ]);
    expect(store.appends).toEqual([1, 2, 2, 1]);
    expect(await texts()).toEqual(["a0", "a1", "a2", "b0", "b1", "none"]);
  });

  it("appends queued behind a write that finds the segment changed all land in the fork, in order", async () => {
    const root = await tempDir();
    const { log: a } = await logOn(new FsStore({ root }));
    const b = await SessionLog.open(new FsStore({ root }), a.sessionId);
    await a.append(input("a wrote first"));
    const results = await Promise.all(["b0", "b1", "b2", "b3"].map((text) => b.append(input(text))));
    expect(new Set(results.map((result) => result.segmentId)).size).toBe(1);
    expect(results[0]?.segmentId).not.toBe(a.segmentId);
    expect(results.map((result) => result.index)).toEqual([1, 2, 3, 4]);
    // The write that found the segment changed reports the fork; the ones queued behind it went
    // straight to the fork.
    expect(results.map((result) => result.driftFork !== null)).toEqual([true, false, false, false]);
    const fork = await SessionLog.openSegment(new FsStore({ root }), b.ref);
    expect(
      fork.state.history.map((item) => (item as unknown as { content: { text: string }[] }).content[0]?.text),
    ).toEqual(["b0", "b1", "b2", "b3"]);
  });
});
