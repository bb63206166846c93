import type { Item } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";
import { entryCheck, eventId } from "./event-id.js";

/**
 * One segment of a session's stream as SSE frames: the text of each committed entry's event,
 * ready to write to every client as it is (so all clients, and all servers, send the same bytes).
 */
export class SegmentFrames {
  readonly frames: string[] = [];
  readonly checks: string[] = [];
  /** Increases with each truncation; `cuts` says how far each one cut. */
  epoch = 0;
  readonly cuts: { epoch: number; count: number }[] = [];

  constructor(readonly segmentId: string) {}

  get length(): number {
    return this.frames.length;
  }

  /** Adds the event of the next entry. */
  push(entry: Entry<Item>): void {
    const index = this.frames.length;
    const json = JSON.stringify(entry);
    const check = entryCheck(json);
    const data = `{"segment":${JSON.stringify(this.segmentId)},"index":${index},"entry":${json}}`;
    this.frames.push(`id: ${eventId(this.segmentId, index, check)}\nevent: entry\ndata: ${data}\n\n`);
    this.checks.push(check);
  }

  /** True when `entry` is the one already held at `index`. */
  holds(index: number, entry: Entry<Item>): boolean {
    return this.checks[index] === entryCheck(JSON.stringify(entry));
  }

  /** Keeps the first `count` events: the log was cut back there. */
  cut(count: number): void {
    if (count >= this.frames.length) return;
    this.frames.length = count;
    this.checks.length = count;
    this.epoch += 1;
    this.cuts.push({ epoch: this.epoch, count });
  }

  /** The smallest cut after `epoch`, if any. */
  cutSince(epoch: number): number | undefined {
    let smallest: number | undefined;
    for (const cut of this.cuts) {
      if (cut.epoch > epoch && (smallest === undefined || cut.count < smallest)) smallest = cut.count;
    }
    return smallest;
  }

  /** The event telling a client the log was cut back to `count` entries; its id is the entry now last. */
  truncateFrame(count: number): string {
    const last = count - 1;
    return `id: ${eventId(this.segmentId, last, this.checks[last] ?? "")}\nevent: truncate\ndata: {"segment":${JSON.stringify(this.segmentId)},"count":${count}}\n\n`;
  }
}
