import type { ListCursor, SessionListFeed } from "./session-list-feed.js";
import { pullSseStream, type SseStreamOptions } from "./sse-response.js";

/**
 * The `text/event-stream` body of one client of the live session list: the whole listing, then
 * what changes, as it changes (docs/serve.md, "The session list, live"). Pull-based like a
 * session's stream (`pullSseStream`): frames are made from the shared feed when the socket can
 * take more.
 */
export function listSseStream(
  feed: SessionListFeed,
  cursor: ListCursor,
  options: SseStreamOptions,
): ReadableStream<Uint8Array> {
  let pending = "retry: 1000\n\n";
  return pullSseStream(
    {
      onChange: (listener) => feed.onChange(listener),
      isClosed: () => feed.isClosed,
      take: () => {
        const frames = pending + (feed.next(cursor) ?? "");
        pending = "";
        return frames === "" ? undefined : frames;
      },
    },
    options,
  );
}
