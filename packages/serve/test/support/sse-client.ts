import { request } from "node:http";
import { parseFrame } from "../../src/viewer/sse-frame.js";

/** One Server-Sent Event as a client parses it, plus its exact text on the wire. */
export interface SseEvent {
  event: string;
  id: string | undefined;
  data: string;
  raw: string;
}

/** A live event stream read over a real socket; `close()` disconnects. */
export interface SseConnection {
  events: SseEvent[];
  status: number;
  /** Resolves with the events so far once `until` holds for one of them (bounded by `timeoutMs`). */
  waitFor(until: (event: SseEvent, all: SseEvent[]) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
  closed: Promise<void>;
}

/** Opens `url` as an event stream with the given headers (`Last-Event-ID`, `Authorization`). */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    const waiters = new Set<() => void>();
    let buffer = "";
    let endClosed: () => void = () => {};
    const closed = new Promise<void>((r) => {
      endClosed = r;
    });
    const req = request(url, { headers: { accept: "text/event-stream", ...headers } }, (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const raw = buffer.slice(0, end + 2);
          buffer = buffer.slice(end + 2);
          const parsed = parseEvent(raw);
          if (parsed !== undefined) events.push(parsed);
        }
        for (const waiter of [...waiters]) waiter();
      });
      res.on("close", () => {
        endClosed();
        for (const waiter of [...waiters]) waiter();
      });
      resolve({
        events,
        status: res.statusCode ?? 0,
        closed,
        close: () => req.destroy(),
        // Generous by default: on a busy machine a turn's events can take several seconds.
        waitFor: (until, timeoutMs = 20_000) =>
          new Promise((done, fail) => {
            const check = () => {
              if (events.some((event) => until(event, events))) {
                waiters.delete(check);
                clearTimeout(timer);
                done(events);
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(
                new Error(
                  `no matching event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(",")}`,
                ),
              );
            }, timeoutMs);
            waiters.add(check);
            check();
          }),
      });
    });
    req.on("error", (error) => {
      endClosed();
      reject(error);
    });
    req.end();
  });
}

/** The viewer's own frame parser, plus the frame's exact text. */
function parseEvent(raw: string): SseEvent | undefined {
  const event = parseFrame(raw);
  return event === undefined ? undefined : { ...event, raw };
}

/** The committed entries a stream delivered, as `{id, segment, index, entry}`. */
export function entriesOf(events: readonly SseEvent[]) {
  return events
    .filter((event) => event.event === "entry")
    .map((event) => ({
      id: event.id as string,
      raw: event.raw,
      ...(JSON.parse(event.data) as {
        segment: string;
        index: number;
        entry: { kind: string } & Record<string, unknown>;
      }),
    }));
}

/** A JSON request over real HTTP: status and parsed body. */
export async function http(
  url: string,
  init: { method?: string; json?: unknown; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: unknown; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(url, {
    method: init.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    body,
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}
