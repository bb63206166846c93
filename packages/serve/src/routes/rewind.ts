import { RewindRefusedError, rewindSession } from "@podkit/pod";
import type { Hono } from "hono";
import { z } from "zod";
import { HttpError } from "../http/http-error.js";
import { jsonBody } from "../http/json-body.js";
import { checkedSessionId } from "../http/session-id.js";
import type { RouteContext } from "./context.js";

/** The options of `rewindSession` a client may set; nothing else gets through. */
const RewindBody = z
  .strictObject({
    toTurn: z.int({ error: "give the last turn to keep as a whole number (0 is before the first)" }).min(0, {
      error: "give the last turn to keep as a whole number (0 is before the first)",
    }),
    dryRun: z.boolean().optional(),
    force: z.boolean().optional(),
    filesOnly: z.boolean().optional(),
    conversationOnly: z.boolean().optional(),
  })
  .refine((body) => !(body.filesOnly === true && body.conversationOnly === true), {
    error: "give filesOnly or conversationOnly, not both",
    path: ["conversationOnly"],
  });

/**
 * `POST /sessions/:id/rewind`: takes the session back to the end of turn `toTurn` — the
 * conversation and the files it changed since — through `rewindSession` of `@podkit/pod`, the one
 * owner of rewinds (docs/rewind.md), in the workspace this server's pods work in. The session is
 * held meanwhile (`SessionRuns.exclusively`): refused while it runs here or a dispatched run of
 * it is unfinished. A refusal over files edited outside the pod is a 409 listing them.
 */
export function rewindRoutes(app: Hono, ctx: RouteContext): void {
  app.post("/sessions/:id/rewind", async (c) => {
    const sessionId = checkedSessionId(c.req.param("id"));
    const body = await jsonBody(c, RewindBody);
    const { workspace } = ctx;
    if (workspace === undefined) {
      throw new HttpError(
        501,
        "this server was started without a workspace, so it cannot rewind a session's files",
        "start it with the `workspace` option (`podkit serve` passes its manifest's)",
      );
    }
    try {
      const report = await ctx.runs.exclusively(sessionId, (store) =>
        rewindSession({ store, sessionId, workspace, ...body, signal: c.req.raw.signal }),
      );
      return c.json(report);
    } catch (error) {
      if (!RewindRefusedError.isInstance(error)) throw error;
      return c.json(
        {
          error: error.message,
          hint: 'send it again with "force": true to overwrite them (their current contents are lost), or save those edits elsewhere first',
          refused: error.refused,
        },
        409,
      );
    }
  });
}
