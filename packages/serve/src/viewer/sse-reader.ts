import { authHeaders } from "./api.js";

/** One event of the stream. */
export interface StreamEvent {
  event: string;
  id: string | undefined;
  data: string;
}

/**
 * Reads a session's event stream with `fetch` (an EventSource cannot send the bearer token) and
 * reconnects after a drop with `Last-Event-ID` = the id of the last event that had one, as an
 * EventSource would. `onEvent` gets every event; `stop()` ends it.
 */
export function readEventStream(
  url: string,
  startAfter: string | undefined,
  onEvent: (event: StreamEvent) => void,
  onState: (state: "connecting" | "open" | "closed", detail?: string) => void,
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
          onState("closed", text);
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

function parseFrame(frame: string): StreamEvent | undefined {
  let event = "message";
  let id: string | undefined;
  const data: string[] = [];
  for (const line of frame.split("\n")) {
    if (line.startsWith(":") || line === "") continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  return data.length === 0 ? undefined : { event, id, data: data.join("\n") };
}
