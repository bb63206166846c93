import { type FSWatcher, watch } from "node:fs";
import type { Item } from "@podkit/llm-worker";
import { FsStore, listSessionRows, NotFoundError, type Store, sessionRow } from "@podkit/session-store";

/** Where one client of the list is: the feed's version it has seen (-1: it has seen nothing). */
export interface ListCursor {
  seen: number;
}

/** How the list learns of changes it is not told about (other processes' appends). */
export interface ListFeedTiming {
  /** Changed sessions are read again this long after the first change (many commits, one read). */
  settleMs: number;
  /** The whole listing is read again this often while a client listens (a safety net). */
  pollMs: number;
}

/**
 * The session listing (`GET /sessions`) kept current for the clients streaming it, shared by all
 * of them and held only while one listens. A commit of this server's pods or a PostgreSQL
 * notification (`touch`) reads that session's row again; a new session directory (filesystem
 * store) or the poll reads the whole listing. Each row carries the version it last changed at; a
 * client's cursor says which version it has seen, so it pulls only what changed since, and a slow
 * client holds a number, never a queue.
 */
export class SessionListFeed {
  /** The listing in the store's order (newest first); sessions found since go first. */
  private order: string[] = [];
  private readonly rows = new Map<string, { json: string; version: number }>();
  private readonly removed = new Map<string, number>();
  private version = 0;
  private readonly waiters = new Set<() => void>();
  private readonly dirty = new Set<string>();
  private clients = 0;
  private loaded: Promise<void> | undefined;
  /** One read at a time, in order: a row read late never overwrites a newer listing. */
  private work: Promise<void> = Promise.resolve();
  private settleTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;
  /** Set by `close()` (the server stops): clients' streams end. */
  isClosed = false;

  constructor(
    private readonly store: Store<Item>,
    private readonly timing: ListFeedTiming,
  ) {}

  /** One more client: resolves once the listing is read (its first read rejects with the store's error). */
  async join(): Promise<ListCursor> {
    this.clients += 1;
    if (this.loaded === undefined) {
      this.loaded = this.enqueue(() => this.readAll());
      this.startWatching();
    }
    try {
      await this.loaded;
    } catch (error) {
      this.leave();
      throw error;
    }
    return { seen: -1 };
  }

  /** A client is gone; after the last, nothing is watched or held. */
  leave(): void {
    this.clients -= 1;
    if (this.clients > 0) return;
    this.clients = 0;
    this.stopWatching();
    this.loaded = undefined;
    this.order = [];
    this.rows.clear();
    this.removed.clear();
    this.dirty.clear();
  }

  /** Session `sessionId` was written (by this server's pods, or another machine's, notified). */
  touch(sessionId: string): void {
    if (this.clients === 0) return;
    this.dirty.add(sessionId);
    this.settleTimer ??= setTimeout(() => {
      this.settleTimer = undefined;
      const ids = [...this.dirty];
      this.dirty.clear();
      this.enqueue(() => this.readRows(ids)).catch(() => undefined);
    }, this.timing.settleMs);
    this.settleTimer.unref();
  }

  /**
   * What `cursor` has not seen, as SSE frames: the whole listing first (`sessions`), then each row
   * that changed or appeared (`session`) and each session gone (`removed`). Undefined when it is
   * up to date.
   */
  next(cursor: ListCursor): string | undefined {
    if (cursor.seen === this.version && cursor.seen >= 0) return undefined;
    let frames: string;
    if (cursor.seen < 0) {
      const all = this.order.map((id) => this.rows.get(id)?.json).filter((json) => json !== undefined);
      frames = `event: sessions\ndata: [${all.join(",")}]\n\n`;
    } else {
      frames = "";
      for (const [id, version] of this.removed)
        if (version > cursor.seen) frames += `event: removed\ndata: ${JSON.stringify({ sessionId: id })}\n\n`;
      // Oldest first, so a client putting each new session on top ends with the newest there.
      for (const id of [...this.order].reverse()) {
        const row = this.rows.get(id);
        if (row !== undefined && row.version > cursor.seen) frames += `event: session\ndata: ${row.json}\n\n`;
      }
    }
    cursor.seen = this.version;
    return frames === "" ? undefined : frames;
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.waiters.add(listener);
    return () => this.waiters.delete(listener);
  }

  private enqueue(read: () => Promise<void>): Promise<void> {
    const run = this.work.then(read);
    this.work = run.catch(() => undefined);
    return run;
  }

  private async readAll(): Promise<void> {
    if (this.clients === 0) return;
    const rows = await listSessionRows(this.store);
    const listed = new Set(rows.map((row) => row.sessionId));
    let changed = false;
    for (const id of this.rows.keys()) {
      if (listed.has(id)) continue;
      this.rows.delete(id);
      this.removed.set(id, this.version + 1);
      changed = true;
    }
    for (const row of rows) changed = this.put(row.sessionId, JSON.stringify(row)) || changed;
    this.order = rows.map((row) => row.sessionId);
    if (changed) this.changed();
  }

  private async readRows(ids: readonly string[]): Promise<void> {
    if (this.clients === 0 || this.loaded === undefined) return;
    let changed = false;
    for (const id of ids) {
      try {
        const json = JSON.stringify(await sessionRow(this.store, id));
        if (!this.order.includes(id)) this.order.unshift(id);
        changed = this.put(id, json) || changed;
      } catch (error) {
        // A session whose first segment is not written yet; any other problem shows in the next
        // full read, which leaves out (and `GET /sessions` warns about) what cannot be listed.
        if (!NotFoundError.isInstance(error)) this.schedulePoll(0);
      }
    }
    if (changed) this.changed();
  }

  /** Stores a row's JSON; true when it differs from what was held. */
  private put(id: string, json: string): boolean {
    if (this.rows.get(id)?.json === json) return false;
    this.rows.set(id, { json, version: this.version + 1 });
    this.removed.delete(id);
    return true;
  }

  private changed(): void {
    this.version += 1;
    for (const waiter of [...this.waiters]) waiter();
  }

  private startWatching(): void {
    if (this.store instanceof FsStore) {
      try {
        // A new session is a new directory under the root: read the listing for it.
        this.watcher = watch(this.store.root, { persistent: false }, () =>
          this.schedulePoll(this.timing.settleMs),
        );
        this.watcher.on("error", () => {
          this.watcher?.close();
          this.watcher = undefined;
        });
      } catch {
        this.watcher = undefined; // no root yet, or no inotify watches left: the poll sees it
      }
    }
    this.schedulePoll(this.timing.pollMs);
  }

  /** The next full read in `ms` (sooner replaces later); the poll goes on from there. */
  private schedulePoll(ms: number): void {
    if (this.clients === 0) return;
    if (this.pollTimer !== undefined) clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      // A failed read (the database away) is tried again at the next poll.
      this.enqueue(() => this.readAll())
        .catch(() => undefined)
        .finally(() => {
          if (this.pollTimer === undefined) this.schedulePoll(this.timing.pollMs);
        });
    }, ms);
    this.pollTimer.unref();
  }

  private stopWatching(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.pollTimer !== undefined) clearTimeout(this.pollTimer);
    if (this.settleTimer !== undefined) clearTimeout(this.settleTimer);
    this.pollTimer = undefined;
    this.settleTimer = undefined;
  }

  /** Stops watching and wakes every client, whose streams then end. */
  close(): void {
    this.stopWatching();
    this.isClosed = true;
    for (const waiter of [...this.waiters]) waiter();
  }
}
