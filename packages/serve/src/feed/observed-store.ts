import type { Item } from "@podkit/llm-worker";
import type { Entry, SegmentRef, Store } from "@podkit/session-store";

/** What the server learns from a write its own pods made: the segment and its entry count after it. */
export interface LocalCommit {
  ref: SegmentRef;
  count: number;
  /** True for a truncation (a turn cancelled before any output was cut from the log). */
  truncated: boolean;
}

/**
 * The store the server hands its pods, reporting each committed write of this process right
 * away: feeds wake without waiting for a file watcher or a notification, and a live text preview
 * knows how many entries its response follows. Every other member (reads, future methods) is the
 * store's own.
 */
export function observedStore(store: Store<Item>, onCommit: (commit: LocalCommit) => void): Store<Item> {
  const createSegment = async (ref: SegmentRef, entries: readonly Entry<Item>[]) => {
    await store.createSegment(ref, entries);
    onCommit({ ref, count: entries.length, truncated: false });
  };
  const append: Store<Item>["append"] = async (ref, entries, options) => {
    const outcome = await store.append(ref, entries, options);
    if (outcome.status === "appended") onCommit({ ref, count: outcome.count, truncated: false });
    return outcome;
  };
  const truncate: Store<Item>["truncate"] = async (ref, keep, options) => {
    const outcome = await store.truncate(ref, keep, options);
    if (outcome.status === "truncated") onCommit({ ref, count: outcome.count, truncated: true });
    return outcome;
  };
  const wrapped: Record<PropertyKey, unknown> = { createSegment, append, truncate };
  return new Proxy(store, {
    get(target, property) {
      if (Object.hasOwn(wrapped, property)) return wrapped[property];
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
