import type { ListCursor, SessionListFeed } from "./session-list-feed.js";

/**
 * The `text/event-stream` body of one client of the live session list: the whole listing, then
 * what changes, as it changes (docs/serve.md, "The session list, live"). Pull-based like a
 * session's stream: frames are made from the shared feed when the socket can take more.
 */
export function listSseStream(
  feed: SessionListFeed,
  cursor: ListCursor,
  options: { keepaliveMs: number; onClose: () => void },
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let pending = "retry: 1000\n\n";
  let wakeUp: (() => void) | undefined;
  let finished = false;
  const unsubscribe = feed.onChange(() => {
    const wake = wakeUp;
    wakeUp = undefined;
    wake?.();
  });
  const finish = () => {
    if (finished) return;
    finished = true;
    unsubscribe();
    wakeUp?.();
    options.onClose();
  };
  /** Resolves true on a change of the listing, false after `ms` without one. */
  const changed = (ms: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        wakeUp = undefined;
        resolve(false);
      }, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (finished || feed.isClosed) {
          finish();
          try {
            controller.close();
          } catch {
            // already cancelled by the client
          }
          return;
        }
        const frames = pending + (feed.next(cursor) ?? "");
        pending = "";
        if (frames !== "") {
          controller.enqueue(encoder.encode(frames));
          return;
        }
        if (!(await changed(options.keepaliveMs)) && !finished) {
          controller.enqueue(encoder.encode(": keepalive\n\n"));
          return;
        }
      }
    },
    cancel() {
      finish();
    },
  });
}
