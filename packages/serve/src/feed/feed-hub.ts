import type { Item } from "@podkit/llm-worker";
import type { SegmentRef, Store } from "@podkit/session-store";
import type { DraftBoard } from "../runs/draft-board.js";
import { notifiesAppends, type PollIntervals, watchSession } from "./append-wakers.js";
import { SessionFeed } from "./session-feed.js";

interface Held {
  feed: Promise<SessionFeed>;
  clients: number;
  stopWatching: () => void;
}

/**
 * The feeds of the sessions clients are streaming from this server: one per session, opened by
 * its first client and closed after its last. Wakes each feed on this process's own writes, on
 * its watcher or poll, and — on a store that notifies appends — on every other machine's.
 */
export class FeedHub {
  private readonly held = new Map<string, Held>();
  private notifications: { close(): Promise<void> } | undefined;
  private readonly wakeListeners = new Set<(ref: SegmentRef) => void>();

  constructor(
    private readonly store: Store<Item>,
    private readonly drafts: DraftBoard,
    private readonly intervals: PollIntervals,
  ) {}

  /** Starts listening for other processes' appends, where the store can tell them. */
  async start(): Promise<void> {
    if (notifiesAppends(this.store)) {
      this.notifications = await this.store.listenForAppends((ref) => this.wake(ref));
    }
  }

  /** The feed of `sessionId` for one more client (`NotFoundError` for an unknown session) and its release. */
  async acquire(sessionId: string): Promise<{ feed: SessionFeed; release: () => void }> {
    let held = this.held.get(sessionId);
    if (held === undefined) {
      const feed = SessionFeed.open(this.store, sessionId, this.drafts);
      const entry: Held = { feed, clients: 0, stopWatching: () => {} };
      held = entry;
      this.held.set(sessionId, entry);
      feed.then(
        (opened) => {
          if (this.held.get(sessionId) !== entry) return;
          entry.stopWatching = watchSession(
            this.store,
            sessionId,
            () => opened.wake(),
            this.intervals,
            this.notifications !== undefined,
          );
          // Whatever was committed between reading the line and starting to watch.
          opened.wake();
        },
        () => {
          if (this.held.get(sessionId) === entry) this.held.delete(sessionId);
        },
      );
    }
    held.clients += 1;
    const current = held;
    let feed: SessionFeed;
    try {
      feed = await current.feed;
    } catch (error) {
      current.clients -= 1;
      throw error;
    }
    let released = false;
    return {
      feed,
      release: () => {
        if (released) return;
        released = true;
        current.clients -= 1;
        if (current.clients === 0 && this.held.get(sessionId) === current) {
          this.held.delete(sessionId);
          current.stopWatching();
          feed.close();
        }
      },
    };
  }

  /** Tells `listener` of every write `wake` hears of, too (the live session list). */
  onWake(listener: (ref: SegmentRef) => void): void {
    this.wakeListeners.add(listener);
  }

  /** A write to `ref` committed (here or, through a notification, elsewhere). */
  wake(ref: SegmentRef): void {
    for (const listener of this.wakeListeners) listener(ref);
    const held = this.held.get(ref.sessionId);
    held?.feed.then(
      (feed) => feed.wake(),
      () => undefined,
    );
  }

  /** Number of sessions with open feeds (tests). */
  get size(): number {
    return this.held.size;
  }

  /** Closes every feed (their clients' streams end) and the notification listener. */
  async close(): Promise<void> {
    for (const [sessionId, held] of this.held) {
      this.held.delete(sessionId);
      held.stopWatching();
      await held.feed.then(
        (feed) => feed.close(),
        () => undefined,
      );
    }
    await this.notifications?.close();
    this.notifications = undefined;
  }
}
