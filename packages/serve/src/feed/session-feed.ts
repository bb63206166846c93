import type { Item } from "@podkit/llm-worker";
import { describeSession, type Entry, lineOf, type Store } from "@podkit/session-store";
import type { DraftBoard } from "../runs/draft-board.js";
import type { StreamPosition } from "./event-id.js";
import { SegmentFrames } from "./segment-frames.js";

/** Where one client is in the feed: the segment of the line, the next entry to send, the cuts seen. */
export interface FeedCursor {
  pos: number;
  index: number;
  epoch: number;
}

/**
 * One session's committed entries as SSE frames, shared by every client of this server streaming
 * it. The log is the only source: the feed reads the session's line of segments once, then, each
 * time it is woken (a write of this process, a file watcher, a PostgreSQL notification, a poll),
 * reads what was committed since — following a compaction or drift fork into the next segment and
 * noticing when a segment was cut back. Clients keep their own cursor and pull frames from here.
 */
export class SessionFeed {
  private readonly line: SegmentFrames[] = [];
  private readonly waiters = new Set<() => void>();
  private knownSegments = 0;
  private syncing: Promise<void> | undefined;
  private dirty = false;
  private closed = false;
  private readonly unwatchDrafts: () => void;
  /** Why the feed cannot go on (a corrupt entry was appended); clients are told and closed. */
  failure: string | undefined;

  private constructor(
    private readonly store: Store<Item>,
    readonly sessionId: string,
    readonly drafts: DraftBoard,
  ) {
    this.unwatchDrafts = drafts.watch(sessionId, () => this.notify());
  }

  /** Reads the session's line (`NotFoundError` for an unknown session) and returns its feed. */
  static async open(store: Store<Item>, sessionId: string, drafts: DraftBoard): Promise<SessionFeed> {
    const overview = await describeSession(store, sessionId);
    const feed = new SessionFeed(store, sessionId, drafts);
    try {
      feed.knownSegments = 1 + overview.otherBranches.length + overview.compacted.length;
      for (const segmentId of lineOf(overview)) await feed.load(new SegmentFrames(segmentId));
    } catch (error) {
      feed.close();
      throw error;
    }
    return feed;
  }

  /**
   * The cursor of a client resuming after `position` (or from the start), and the events it needs
   * first: a `reset` when its copy of a segment is not the log's any more (or names a segment
   * this session's line does not hold), so it drops that segment and gets it again.
   */
  start(position: StreamPosition | undefined): { cursor: FeedCursor; prelude: string } {
    const first = this.line[0] as SegmentFrames;
    const fromStart = { pos: 0, index: 0, epoch: first.epoch };
    if (position === undefined) return { cursor: fromStart, prelude: "" };
    const pos = this.line.findIndex((segment) => segment.segmentId === position.segmentId);
    const segment = this.line[pos];
    if (segment === undefined) return { cursor: fromStart, prelude: resetFrame(null) };
    const held = position.index < segment.length;
    if (held && (position.check === undefined || segment.checks[position.index] === position.check)) {
      return { cursor: { pos, index: position.index + 1, epoch: segment.epoch }, prelude: "" };
    }
    return { cursor: { pos, index: 0, epoch: segment.epoch }, prelude: resetFrame(segment.segmentId) };
  }

  /** Up to `max` frames after `cursor` (advancing it), or undefined when the client has them all. */
  next(cursor: FeedCursor, max: number): string | undefined {
    let out = "";
    for (let sent = 0; sent < max; ) {
      const segment = this.line[cursor.pos] as SegmentFrames;
      if (segment.epoch !== cursor.epoch) {
        const cut = segment.cutSince(cursor.epoch);
        cursor.epoch = segment.epoch;
        if (cut !== undefined && cursor.index > cut) {
          out += segment.truncateFrame(cut);
          cursor.index = cut;
        }
      }
      if (cursor.index < segment.length) {
        out += segment.frames[cursor.index];
        cursor.index += 1;
        sent += 1;
      } else if (cursor.pos < this.line.length - 1) {
        cursor.pos += 1;
        cursor.index = 0;
        cursor.epoch = (this.line[cursor.pos] as SegmentFrames).epoch;
      } else break;
    }
    return out === "" ? undefined : out;
  }

  /** Calls `waiter` on every change (new frames, a cut, a preview); returns the unsubscribe. */
  onChange(waiter: () => void): () => void {
    this.waiters.add(waiter);
    return () => this.waiters.delete(waiter);
  }

  /** Something may have been committed: read it (coalesced: one read at a time, then one more). */
  wake(): void {
    if (this.closed) return;
    if (this.syncing !== undefined) {
      this.dirty = true;
      return;
    }
    this.syncing = this.syncLoop();
  }

  /** Resolves when no read is in progress (tests and shutdown). */
  async settled(): Promise<void> {
    while (this.syncing !== undefined) await this.syncing;
  }

  /** True once closed: its clients' streams end. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Stops reading; every client's stream ends. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unwatchDrafts();
    this.notify();
    this.waiters.clear();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private async syncLoop(): Promise<void> {
    try {
      do {
        this.dirty = false;
        try {
          if (await this.sync()) this.notify();
        } catch (error) {
          this.failure = `the session log cannot be read: ${(error as Error).message}`;
          this.notify();
          return;
        }
      } while (this.dirty && !this.closed);
    } finally {
      this.syncing = undefined;
    }
  }

  /** Reads what the last segment of the line gained (or lost), else looks for its successor. */
  private async sync(): Promise<boolean> {
    const segment = this.line.at(-1) as SegmentFrames;
    const known = segment.length;
    let verified = known === 0;
    let changed = false;
    // The last held entry is read again: if it changed, the segment was cut back and rewritten.
    for await (const batch of this.store.readFrom(this.refOf(segment), Math.max(0, known - 1))) {
      let from = 0;
      if (!verified) {
        if (!segment.holds(known - 1, batch[0] as Entry<Item>)) return this.reload(segment);
        verified = true;
        from = 1;
      }
      for (let i = from; i < batch.length; i++) segment.push(batch[i] as Entry<Item>);
      changed ||= batch.length > from;
    }
    if (!verified) return this.reload(segment); // the held last entry is gone: a cut
    return changed || (await this.followSuccessors(segment));
  }

  /** The segment was cut back: keep the events it still holds, cut the rest, read on from there. */
  private async reload(segment: SegmentFrames): Promise<boolean> {
    const entries: Entry<Item>[] = [];
    for await (const batch of this.store.readFrom(this.refOf(segment), 0)) entries.push(...batch);
    let same = 0;
    while (
      same < entries.length &&
      same < segment.length &&
      segment.holds(same, entries[same] as Entry<Item>)
    )
      same += 1;
    segment.cut(same);
    for (const entry of entries.slice(same)) segment.push(entry);
    return true;
  }

  /** A compaction or drift fork continued the session in a new segment: the line goes on there. */
  private async followSuccessors(segment: SegmentFrames): Promise<boolean> {
    const ids = await this.store.listSegments(this.sessionId);
    if (ids.length === this.knownSegments) return false;
    const line = lineOf(await describeSession(this.store, this.sessionId));
    this.knownSegments = ids.length;
    const at = line.indexOf(segment.segmentId);
    if (at < 0 || at === line.length - 1) return false;
    for (const segmentId of line.slice(at + 1)) await this.load(new SegmentFrames(segmentId));
    this.dirty = true; // the new segment may already be growing
    return true;
  }

  private async load(segment: SegmentFrames): Promise<void> {
    for await (const batch of this.store.readFrom(this.refOf(segment), 0)) {
      for (const entry of batch) segment.push(entry);
    }
    this.line.push(segment);
  }

  private refOf(segment: SegmentFrames) {
    return { sessionId: this.sessionId, segmentId: segment.segmentId };
  }
}

/** Tells a client to drop what it holds of `segmentId` and after it (null: everything). */
function resetFrame(segmentId: string | null): string {
  return `event: reset\ndata: {"segment":${JSON.stringify(segmentId)}}\n\n`;
}
