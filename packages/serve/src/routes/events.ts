import type { Hono } from "hono";
import { parseStreamPosition, type StreamPosition } from "../feed/event-id.js";
import { sseStream } from "../feed/sse-response.js";
import { HttpError } from "../http/http-error.js";
import { checkedSessionId } from "../http/session-id.js";
import type { RouteContext } from "./context.js";

/**
 * `GET /sessions/:id/events`: the session's log as Server-Sent Events, from the position in
 * `Last-Event-ID` (what a reconnecting EventSource sends) or `?after=`, else from the start; then
 * live. See docs/serve.md for the event format.
 */
export function eventRoutes(app: Hono, ctx: RouteContext): void {
  app.get("/sessions/:id/events", async (c) => {
    const sessionId = checkedSessionId(c.req.param("id"));
    const position = positionOf(c.req.header("last-event-id") ?? c.req.query("after"));
    if (ctx.streams.open >= ctx.streams.max) {
      throw new HttpError(503, `this server streams ${ctx.streams.max} sessions at most`, "retry later");
    }
    ctx.streams.open += 1;
    let acquired: Awaited<ReturnType<RouteContext["hub"]["acquire"]>>;
    try {
      acquired = await ctx.hub.acquire(sessionId);
    } catch (error) {
      ctx.streams.open -= 1;
      throw error;
    }
    const { feed, release } = acquired;
    const body = sseStream(feed, feed.start(position), {
      keepaliveMs: ctx.keepaliveMs,
      onClose: () => {
        ctx.streams.open -= 1;
        release();
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      },
    });
  });
}

function positionOf(raw: string | undefined): StreamPosition | undefined {
  if (raw === undefined || raw === "") return undefined;
  const position = parseStreamPosition(raw);
  if (position === undefined) {
    throw new HttpError(
      400,
      `invalid stream position ${JSON.stringify(raw.slice(0, 200))}`,
      "use the id of an event this stream sent: <segmentId>:<index>[:<check>]",
    );
  }
  return position;
}
