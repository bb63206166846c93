import type { Entry } from "../entry/entry-schema.js";
import {
  type AppendOutcome,
  type AppendsNow,
  appendNow,
  appendsNow,
  markAppendNow,
  type SegmentRef,
  type Store,
  type WriteOptions,
} from "./store.js";

/** A write that committed through an observed store: the segment and its entry count after it. */
export interface StoreCommit {
  ref: SegmentRef;
  count: number;
  /** True for a truncation (entries cut from the end), false for a new segment or an append. */
  truncated: boolean;
}

/**
 * `store` reporting each write it commits to `onCommit`, right after the write and before the
 * writer hears of it: a server whose pods write through it wakes its readers without waiting for a
 * file watcher or a notification. Every other member is the store's own (`instanceof` still
 * holds), and an append through it costs what it costs on `store` itself: a store that can finish
 * an append without waiting (`FsStore` with its lock held) still does, where a plain async wrapper
 * would add a chain of promises to every entry a pod writes. `onCommit` must not throw.
 */
export function observeCommits<TItem>(
  store: Store<TItem>,
  onCommit: (commit: StoreCommit) => void,
): Store<TItem> {
  const reportAppend = (ref: SegmentRef, outcome: AppendOutcome): AppendOutcome => {
    if (outcome.status === "appended") onCommit({ ref, count: outcome.count, truncated: false });
    return outcome;
  };
  const direct = appendsNow(store);
  const appendObserved = (
    ref: SegmentRef,
    entries: readonly Entry<TItem>[],
    expectedCount: number | undefined,
    signal: AbortSignal | undefined,
  ): AppendOutcome | Promise<AppendOutcome> => {
    const outcome = direct
      ? (store as Store<TItem> & AppendsNow<TItem>)[appendNow](ref, entries, expectedCount, signal)
      : store.append(ref, entries, writeOptions(expectedCount, signal));
    return outcome instanceof Promise
      ? outcome.then((settled) => reportAppend(ref, settled))
      : reportAppend(ref, outcome);
  };
  const append: Store<TItem>["append"] = (ref, entries, options) => {
    try {
      return Promise.resolve(appendObserved(ref, entries, options?.expectedCount, options?.signal));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  markAppendNow(append as Store<never>["append"]);
  const createSegment: Store<TItem>["createSegment"] = async (ref, entries) => {
    await store.createSegment(ref, entries);
    onCommit({ ref, count: entries.length, truncated: false });
  };
  const truncate: Store<TItem>["truncate"] = async (ref, keep, options) => {
    const outcome = await store.truncate(ref, keep, options);
    if (outcome.status === "truncated") onCommit({ ref, count: outcome.count, truncated: true });
    return outcome;
  };
  const own = new Map<PropertyKey, unknown>([
    ["createSegment", createSegment],
    ["append", append],
    ["truncate", truncate],
    [appendNow, appendObserved],
  ]);
  return new Proxy(store, {
    get(target, property) {
      const known = own.get(property);
      if (known !== undefined) return known;
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      // Bound once per member, not on every call a pod makes.
      const bound = value.bind(target);
      own.set(property, bound);
      return bound;
    },
  });
}

function writeOptions(expectedCount: number | undefined, signal: AbortSignal | undefined): WriteOptions {
  return {
    ...(expectedCount === undefined ? {} : { expectedCount }),
    ...(signal === undefined ? {} : { signal }),
  };
}
