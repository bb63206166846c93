import { NOTIFICATION_CAPACITY } from "./pod-options.js";

/**
 * The pod's notification FIFO: at most `NOTIFICATION_CAPACITY` messages; beyond that the
 * oldest is dropped. `push` returns true for the first drop of a burst (a burst ends when the
 * queue is drained), so the caller warns once per burst rather than once per message.
 */
export class NotificationQueue {
  private readonly messages: string[] = [];
  private dropping = false;

  get size(): number {
    return this.messages.length;
  }

  push(message: string): boolean {
    this.messages.push(message);
    if (this.messages.length <= NOTIFICATION_CAPACITY) return false;
    this.messages.shift();
    const first = !this.dropping;
    this.dropping = true;
    return first;
  }

  /** Every queued message, oldest first; the queue is empty afterwards. */
  drain(): string[] {
    this.dropping = false;
    return this.messages.splice(0);
  }
}
