import type { PodRunResult } from "@podkit/pod";
import { ApprovalAnswerInputSchema, listSessionRows, readSessionView } from "@podkit/session-store";
import type { Hono } from "hono";
import { z } from "zod";
import { listSseStream } from "../feed/list-sse-response.js";
import { HttpError } from "../http/http-error.js";
import { jsonBody } from "../http/json-body.js";
import { checkedSessionId } from "../http/session-id.js";
import type { StartedRun } from "../runs/session-runs.js";
import { answeredBy } from "../security/credentials.js";
import type { RouteContext } from "./context.js";

/**
 * A tool call id as providers make them: letters, digits, `_`, `-`, `.` and `:` (`toolu_01…`,
 * `call_…`, `functions.lookup:0`), at most 256 characters; never a path.
 */
function checkedCallId(raw: string | undefined): string {
  if (raw === undefined || !/^[A-Za-z0-9_.:-]{1,256}$/.test(raw)) {
    throw new HttpError(
      400,
      `invalid call id ${JSON.stringify(raw ?? "")}`,
      "GET /sessions/<id> lists the session's approvals with their call ids",
    );
  }
  return raw;
}

/** The most a message may hold; the request body is capped at 1 MiB anyway. */
const MessageBody = z.strictObject({
  message: z.string().min(1, "give the user's message as a non-empty string"),
  wait: z.boolean().optional(),
});

/**
 * The session routes: list and show (the data of `podkit session list|show --json`), start a
 * session, continue one, interrupt its run, answer a pending approval (and continue the run).
 */
export function sessionRoutes(app: Hono, ctx: RouteContext): void {
  // Debris (a session without a segment) is left out with a warning, never a failed listing.
  // Asked for an event stream, the listing stays open and sends what changes (the viewer's list).
  app.get("/sessions", async (c) => {
    if ((c.req.header("accept") ?? "").includes("text/event-stream")) return liveList(ctx);
    return c.json(
      await listSessionRows(ctx.store, {
        onSkipped: ({ sessionId, problem }) =>
          ctx.warn(`session ${sessionId} left out of the listing: ${problem}`),
      }),
    );
  });

  app.get("/sessions/:id", async (c) => {
    return c.json(await readSessionView(ctx.store, checkedSessionId(c.req.param("id"))));
  });

  app.post("/sessions", async (c) => {
    const body = await jsonBody(c, MessageBody);
    const started = await ctx.runs.start(body.message);
    return body.wait === true ? c.json(await finished(started)) : c.json(accepted(started), 201);
  });

  app.post("/sessions/:id/messages", async (c) => {
    const sessionId = checkedSessionId(c.req.param("id"));
    const body = await jsonBody(c, MessageBody);
    const started = await ctx.runs.continue(sessionId, body.message);
    return body.wait === true ? c.json(await finished(started)) : c.json(accepted(started), 202);
  });

  app.post("/sessions/:id/interrupt", async (c) => {
    const sessionId = checkedSessionId(c.req.param("id"));
    if (!(await ctx.runs.interrupt(sessionId))) {
      throw new HttpError(
        409,
        `session ${sessionId} has no run in progress on this server`,
        "a run can be interrupted through the server that started it",
      );
    }
    return c.json({ sessionId, interrupted: true }, 202);
  });

  app.post("/sessions/:id/approvals/:call", async (c) => {
    const sessionId = checkedSessionId(c.req.param("id"));
    const callId = checkedCallId(c.req.param("call"));
    const body = await jsonBody(c, ApprovalAnswerInputSchema);
    // Credited to who sent the request (a token's holder), never to this server's own OS user.
    const by = answeredBy(ctx.requester(c.req.header("authorization")), body.by);
    const answered = await ctx.runs.answer(sessionId, callId, { ...body, by });
    const { next } = answered;
    const continued = next.kind === "resume" ? next.sessionId : sessionId;
    return c.json(
      {
        sessionId: answered.sessionId,
        callId,
        decision: body.decision,
        by: answered.approval.answer?.by ?? by,
        // What continues now: `wait` (other calls are awaited), `resume` (this server resumed the
        // tree from `continuedSessionId`), `requeued` (a worker continues dispatched run `runId`), `none`.
        next: next.kind,
        continuedSessionId: next.kind === "wait" || next.kind === "none" ? null : next.sessionId,
        ...(next.kind === "requeued" ? { runId: next.runId } : {}),
        // The calls still awaited (with `wait`): how many, and which, in which session and pod.
        pending: next.kind === "wait" ? next.pending.length : 0,
        waiting:
          next.kind === "wait"
            ? next.pending.map((p) => ({
                sessionId: p.sessionId,
                callId: p.callId,
                tool: p.tool,
                podPath: p.podPath,
              }))
            : [],
        resumed: answered.resumed !== undefined,
        events: `/sessions/${continued}/events`,
      },
      202,
    );
  });
}

/** The listing as an event stream: all of it, then each change (docs/serve.md). */
async function liveList(ctx: RouteContext): Promise<Response> {
  if (ctx.streams.open >= ctx.streams.max) {
    throw new HttpError(
      503,
      `this server streams ${ctx.streams.max} lists and sessions at most`,
      "retry later",
    );
  }
  ctx.streams.open += 1;
  let cursor: Awaited<ReturnType<RouteContext["list"]["join"]>>;
  try {
    cursor = await ctx.list.join();
  } catch (error) {
    ctx.streams.open -= 1;
    throw error;
  }
  const body = listSseStream(ctx.list, cursor, {
    keepaliveMs: ctx.keepaliveMs,
    onClose: () => {
      ctx.streams.open -= 1;
      ctx.list.leave();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    },
  });
}

function accepted(started: StartedRun) {
  return {
    sessionId: started.sessionId,
    segmentId: started.segmentId,
    events: `/sessions/${started.sessionId}/events`,
  };
}

async function finished(started: StartedRun) {
  const result: PodRunResult = await started.handle.result;
  return {
    sessionId: started.sessionId,
    segmentId: started.segmentId,
    status: result.status,
    text: result.text,
    stopReason: result.stopReason ?? null,
    requests: result.requests,
    usage: result.usage,
  };
}
