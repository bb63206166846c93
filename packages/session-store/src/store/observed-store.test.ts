import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../test/helpers/temp-dir.js";
import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import { FsStore } from "../fs/fs-store.js";
import { restoreSession, SessionLog } from "../log/session-log.js";
import { observeCommits, type StoreCommit } from "./observed-store.js";
import { appendEither, appendNow, type SegmentRef } from "./store.js";

const tempDir = useTempDirs();

/** A real FsStore counting the appends that reached its `appendNow` (the path without a promise). */
class CountingStore extends FsStore<MinimalItem> {
  direct = 0;

  override [appendNow](
    ref: SegmentRef,
    entries: readonly Entry<MinimalItem>[],
    expectedCount: number | undefined,
    signal: AbortSignal | undefined,
  ) {
    this.direct += 1;
    return super[appendNow](ref, entries, expectedCount, signal);
  }
}

describe("observeCommits", () => {
  it("reports every committed segment, append and truncation, and nothing that drifted", async () => {
    const store = new FsStore<MinimalItem>({ root: await tempDir() });
    const commits: StoreCommit[] = [];
    const observed = observeCommits(store, (commit) => commits.push(commit));
    const log = await SessionLog.create(observed, { systemPrompt: "observed", config: {} });
    await log.append({ kind: "user_input", text: "one" });
    await log.append({ kind: "user_input", text: "two" });
    const drift = await observed.append(log.ref, [], { expectedCount: 1 });
    expect(drift.status).toBe("drift");
    await observed.truncate(log.ref, 2);
    expect(commits.map(({ count, truncated }) => [count, truncated])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [2, true],
    ]);
    expect(commits.every((commit) => commit.ref.segmentId === log.ref.segmentId)).toBe(true);
    // Reads are the store's own, and the store is still what it was.
    expect(observed).toBeInstanceOf(FsStore);
    const state = await restoreSession(observed, log.ref.sessionId);
    expect(state.history).toHaveLength(1); // "one": "two" was cut
    await store.close();
  });

  it("keeps the store's append without a promise: an append with the lock held finishes at once", async () => {
    const store = new CountingStore({ root: await tempDir() });
    const commits: StoreCommit[] = [];
    const observed = observeCommits(store, (commit) => commits.push(commit));
    const log = await SessionLog.create(observed, { systemPrompt: "observed", config: {} });
    await log.append({ kind: "user_input", text: "takes the lock" });
    const before = store.direct;
    const outcome = appendEither(
      observed,
      log.ref,
      [{ kind: "user_input", ts: 1, text: "held" }],
      2,
      undefined,
    );
    // Not a promise: the log resolves its append without a chain of them.
    expect(outcome).toEqual({ status: "appended", count: 3 });
    expect(store.direct).toBe(before + 1);
    expect(commits.at(-1)?.count).toBe(3);
    // Positive control: an append replaced by a plain async wrapper loses that path.
    const wrapped = new Proxy(store, {
      get: (target, property) =>
        property === "append"
          ? (...args: Parameters<FsStore<MinimalItem>["append"]>) => target.append(...args)
          : Reflect.get(target, property, target),
    });
    const viaWrapper = appendEither(
      wrapped,
      log.ref,
      [{ kind: "user_input", ts: 2, text: "late" }],
      3,
      undefined,
    );
    expect(viaWrapper).toBeInstanceOf(Promise);
    await viaWrapper;
    await store.close();
  });
});
