import { NOTIFICATION_CAPACITY } from "./pod-options.js";

/**
 * The pod's notification FIFO: at most `NOTIFICATION_CAPACITY` messages; beyond that the
 * oldest is dropped, and `onOverflow` is called for the first drop of a burst (a burst ends when
 * the queue is drained), so the pod warns once per burst rather than once per message. It also
 * remembers what it handed out since the turn started: a turn rolled back takes those messages
 * out of history again, and they go back to the front of the queue.
 */
export class NotificationQueue {
  private readonly messages: string[] = [];
  /** Drained since the turn (or its continuation in a compacted segment) started. */
  private delivered: string[] = [];
  private dropping = false;

  constructor(private readonly onOverflow: () => void) {}

  get size(): number {
    return this.messages.length;
  }

  push(message: string): void {
    this.messages.push(message);
    this.trim();
  }

  /** Every queued message, oldest first; the queue is empty afterwards. */
  drain(): string[] {
    this.dropping = false;
    const drained = this.messages.splice(0);
    this.delivered.push(...drained);
    return drained;
  }

  /** A turn starts (or continues after its `invoke` in a new segment): nothing of it delivered yet. */
  startTurn(): void {
    this.delivered = [];
  }

  /** The turn was rolled back: what it delivered is queued again, in order, before anything newer. */
  requeueDelivered(): void {
    this.messages.unshift(...this.delivered);
    this.delivered = [];
    this.trim();
  }

  private trim(): void {
    if (this.messages.length <= NOTIFICATION_CAPACITY) return;
    this.messages.splice(0, this.messages.length - NOTIFICATION_CAPACITY);
    if (!this.dropping) this.onOverflow();
    this.dropping = true;
  }
}
