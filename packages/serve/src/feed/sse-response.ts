import type { FeedCursor, SessionFeed } from "./session-feed.js";

/** Frames handed to a client per read of the stream (bounds one write). */
const MAX_FRAMES_PER_CHUNK = 256;

export interface SseStreamOptions {
  /** A comment line after this long without anything to send, so proxies keep the connection. */
  keepaliveMs: number;
  /** Called once when the client is gone or the stream ended. */
  onClose: () => void;
}

/**
 * The `text/event-stream` body of one client: the prelude (a reset, if its position was stale),
 * the committed entries after its cursor, one `live` event when it has caught up, then new
 * entries and the preview of the response streaming now, as they come. Pull-based: frames are
 * taken from the shared feed only when the socket can take more, so a slow client holds a cursor,
 * never a queue.
 */
export function sseStream(
  feed: SessionFeed,
  start: { cursor: FeedCursor; prelude: string },
  options: SseStreamOptions,
): ReadableStream<Uint8Array> {
  const { cursor } = start;
  let pending = `retry: 1000\n\n${start.prelude}`;
  let live = false;
  let preview = { seq: -1, text: 0, reasoning: 0 };

  const take = (): string | undefined => {
    if (pending !== "") {
      const out = pending;
      pending = "";
      return out;
    }
    const frames = feed.next(cursor, MAX_FRAMES_PER_CHUNK);
    if (frames !== undefined) return frames;
    if (!live) {
      live = true;
      return "event: live\ndata: {}\n\n";
    }
    return previewFrames();
  };

  const previewFrames = (): string | undefined => {
    const draft = feed.drafts.get(feed.sessionId);
    if (draft === undefined) return undefined;
    const key = `"segment":${JSON.stringify(draft.segmentId)},"after":${draft.after}`;
    if (draft.seq !== preview.seq) {
      preview = { seq: draft.seq, text: draft.text.length, reasoning: draft.reasoning.length };
      return `event: draft\ndata: {${key},"text":${JSON.stringify(draft.text)},"reasoning":${JSON.stringify(draft.reasoning)}}\n\n`;
    }
    let out = "";
    if (draft.reasoning.length > preview.reasoning) {
      const delta = draft.reasoning.slice(preview.reasoning);
      preview.reasoning = draft.reasoning.length;
      out += `event: delta\ndata: {${key},"kind":"reasoning","text":${JSON.stringify(delta)}}\n\n`;
    }
    if (draft.text.length > preview.text) {
      const delta = draft.text.slice(preview.text);
      preview.text = draft.text.length;
      out += `event: delta\ndata: {${key},"kind":"text","text":${JSON.stringify(delta)}}\n\n`;
    }
    return out === "" ? undefined : out;
  };

  return pullSseStream(
    {
      onChange: (listener) => feed.onChange(listener),
      isClosed: () => feed.isClosed,
      take,
      failure: () =>
        feed.failure === undefined
          ? undefined
          : `event: error\ndata: ${JSON.stringify({ error: feed.failure })}\n\n`,
    },
    options,
  );
}

/** What a pull-based event stream reads from: a shared feed seen through one client's position. */
export interface PullSource {
  /** Subscribes to "something may have changed"; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
  /** True once the feed will give nothing more: the stream ends. */
  isClosed(): boolean;
  /** The next frames for this client, or undefined when it has seen everything for now. */
  take(): string | undefined;
  /** A last frame to send before ending (the feed failed), or undefined. */
  failure?(): string | undefined;
}

/**
 * The `text/event-stream` body of one client of a shared feed — a session's or the session
 * list's. Pull-based: frames are taken from the feed only when the socket can take more, so a
 * slow client holds a position, never a queue; a keepalive comment after `keepaliveMs` without
 * anything to send; `onClose` once, when the client is gone or the stream ended.
 */
export function pullSseStream(source: PullSource, options: SseStreamOptions): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let wakeUp: (() => void) | undefined;
  let finished = false;
  const unsubscribe = source.onChange(() => {
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

  /** Resolves true on a change of the feed, false after `ms` without one. */
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

  /** Ends the stream from our side; after the client cancelled, there is nothing to close. */
  const end = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    finish();
    try {
      controller.close();
    } catch {
      // already cancelled by the client
    }
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (finished || source.isClosed()) {
          end(controller);
          return;
        }
        const chunk = source.take();
        if (chunk !== undefined) {
          controller.enqueue(encoder.encode(chunk));
          return;
        }
        const failure = source.failure?.();
        if (failure !== undefined) {
          controller.enqueue(encoder.encode(failure));
          end(controller);
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
