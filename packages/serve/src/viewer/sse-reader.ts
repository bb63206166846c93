import { authHeaders } from "./api.js";
import { parseFrame, type StreamEvent } from "./sse-frame.js";

export type { StreamEvent } from "./sse-frame.js";

/**
 * Reads a session's event stream with `fetch` (an EventSource cannot send the bearer token) and
 * reconnects after a drop with `Last-Event-ID` = the id of the last event that had one, as an
 * EventSource would. `onEvent` gets every event; `stop()` ends it. A 4xx answer ends it too
 * (`onState("closed", message, status)`).
 */
export function readEventStream(
  url: string,
  startAfter: string | undefined,
  onEvent: (event: StreamEvent) => void,
  onState: (state: "connecting" | "open" | "closed", detail?: string, httpStatus?: number) => void,
): { stop(): void } {
  let lastId = startAfter;
  let stopped = false;
  let controller = new AbortController();
  const connect = async () => {
    while (!stopped) {
      controller = new AbortController();
      onState("connecting");
      try {
        const headers: Record<string, string> = { ...authHeaders(), accept: "text/event-stream" };
        if (lastId !== undefined) headers["last-event-id"] = lastId;
        const response = await fetch(url, { headers, signal: controller.signal });
        if (!response.ok || response.body === null) {
          const text = await response.text();
          onState("closed", messageOf(text), response.status);
          if (response.status >= 400 && response.status < 500) return;
        } else {
          onState("open");
          await readFrames(response.body, (event) => {
            if (event.id !== undefined) lastId = event.id;
            onEvent(event);
          });
        }
      } catch {
        if (stopped) return;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
  void connect();
  return {
    stop() {
      stopped = true;
      controller.abort();
      onState("closed");
    },
  };
}

async function readFrames(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: StreamEvent) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parseFrame(frame);
      if (event !== undefined) onEvent(event);
    }
  }
}

/** The `error` of a JSON error answer, else the text as it came. */
function messageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; hint?: unknown };
    if (typeof parsed.error === "string")
      return typeof parsed.hint === "string" ? `${parsed.error} (${parsed.hint})` : parsed.error;
  } catch {
    // not JSON: shown as it is
  }
  return text;
}
