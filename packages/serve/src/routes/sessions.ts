import { listSessionRows, type PodRunResult, readSessionLine } from "@podkit/pod";
import { describeSession } from "@podkit/session-store";
import type { Hono } from "hono";
import { z } from "zod";
import { HttpError } from "../http/http-error.js";
import { jsonBody } from "../http/json-body.js";
import { checkedSessionId } from "../http/session-id.js";
import type { StartedRun } from "../runs/session-runs.js";
import type { RouteContext } from "./context.js";

/** The most a message may hold; the request body is capped at 1 MiB anyway. */
const MessageBody = z.strictObject({
  message: z.string().min(1, "give the user's message as a non-empty string"),
  wait: z.boolean().optional(),
});

/**
 * The session routes: list and show (the data of `podkit session list|show --json`), start a
 * session, continue one, interrupt its run.
 */
export function sessionRoutes(app: Hono, ctx: RouteContext): void {
  app.get("/sessions", async (c) => c.json(await listSessionRows(ctx.store)));

  app.get("/sessions/:id", async (c) => {
    const sessionId = checkedSessionId(c.req.param("id"));
    const overview = await describeSession(ctx.store, sessionId);
    const segments = await readSessionLine(ctx.store, overview);
    return c.json({ ...overview, segments });
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
  // Durable approvals (issue 25) add `POST /sessions/:id/approvals/:call` here: it validates the
  // call id like the session id, calls `pod.answerApproval(callId, {decision, reason, by})` on the
  // session's pod (restored through `ctx.runs` when it is not open) and answers 202.
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
