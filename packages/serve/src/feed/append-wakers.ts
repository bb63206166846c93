import { type FSWatcher, watch } from "node:fs";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { FsStore, type SegmentRef, type Store } from "@podkit/session-store";

/**
 * A store that can tell other processes' appends as they commit (`@podkit/store-postgres`: LISTEN
 * on the notification its trigger sends). Optional: without it the server polls.
 */
export interface AppendNotifications {
  listenForAppends(onAppend: (ref: SegmentRef) => void): Promise<{ close(): Promise<void> }>;
}

/** True when `store` can notify appends. */
export function notifiesAppends(store: Store<Item>): store is Store<Item> & AppendNotifications {
  return typeof (store as Partial<AppendNotifications>).listenForAppends === "function";
}

/** How often a feed polls its log when nothing else can wake it, and as a safety net when something can. */
export interface PollIntervals {
  /** No watcher or notification for this store: the only way to see other processes' writes. */
  withoutWatcherMs: number;
  /** Alongside a watcher or notifications, for the event one of them misses. */
  safetyNetMs: number;
}

export const DEFAULT_POLL_INTERVALS: PollIntervals = { withoutWatcherMs: 250, safetyNetMs: 2_000 };

/**
 * Wakes `wake` whenever a session's log may have changed through another process: a watcher on the
 * session's directory for the filesystem store (the poll takes over if the watcher cannot be set
 * up or fails), and always a poll. Returns the stop function. PostgreSQL notifications arrive for
 * the whole store and are routed by the hub, so here they only lengthen the poll.
 */
export function watchSession(
  store: Store<Item>,
  sessionId: string,
  wake: () => void,
  intervals: PollIntervals,
  notified: boolean,
): () => void {
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  const poll = (ms: number) => {
    if (timer !== undefined) clearInterval(timer);
    timer = setInterval(wake, ms);
    timer.unref();
  };
  if (store instanceof FsStore) {
    try {
      watcher = watch(join(store.root, sessionId), { persistent: false }, () => wake());
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
        poll(intervals.withoutWatcherMs);
      });
    } catch {
      watcher = undefined; // no inotify watches left, or a file system without them: poll instead
    }
  }
  poll(watcher !== undefined || notified ? intervals.safetyNetMs : intervals.withoutWatcherMs);
  return () => {
    watcher?.close();
    if (timer !== undefined) clearInterval(timer);
  };
}
