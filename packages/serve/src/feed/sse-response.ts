import type { Draft } from "../runs/draft-board.js";
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
  const answers = new OutputPartialFrames();

  const take = (): string | undefined => {
    if (pending !== "") {
      const out = pending;
      pending = "";
      return out;
    }
    // A typed answer's partials go out before the entries committed after them.
    const partials = live ? answers.frames(feed.drafts.get(feed.sessionId)) : undefined;
    if (partials !== undefined) return partials;
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

/**
 * One client's `output.partial` events (docs/output.md, "Streaming"): for each typed answer of the
 * response streaming now, its latest partial object whenever it changed since the client's last
 * read, with the array elements completed since. A slow client gets fewer partials, never stale
 * ones, and every element once. The response it followed stays held until its last partial is
 * out, so a client that saw an answer begin gets its last partial — the complete arguments — even
 * when the run ended before the client read again.
 */
class OutputPartialFrames {
  private followed: Draft | undefined;
  private readonly sent = new Map<string, { version: number; elements: number }>();

  /** The frames `draft` (the board's current draft, if any) and the one followed before need now. */
  frames(draft: Draft | undefined): string | undefined {
    let out = "";
    if (this.followed !== undefined && this.followed !== draft) {
      out += this.framesOf(this.followed);
      this.followed = undefined;
      this.sent.clear();
    }
    if (draft !== undefined && draft.outputs.length > 0) {
      this.followed = draft;
      out += this.framesOf(draft);
    }
    return out === "" ? undefined : out;
  }

  private framesOf(draft: Draft): string {
    let out = "";
    for (const output of draft.outputs) {
      const sent = this.sent.get(output.callId) ?? { version: 0, elements: 0 };
      if (output.version === sent.version) continue;
      const data = JSON.stringify({
        segment: draft.segmentId,
        after: draft.after,
        callId: output.callId,
        partial: output.partial,
        elements: output.elements.slice(sent.elements),
      });
      this.sent.set(output.callId, { version: output.version, elements: output.elements.length });
      out += `event: output.partial\ndata: ${data}\n\n`;
    }
    return out;
  }
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
