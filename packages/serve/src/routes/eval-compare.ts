import type { Hono } from "hono";
import { readEvalCompare } from "../eval-compare/read-eval-compare.js";
import { checkedSessionId } from "../http/session-id.js";
import type { RouteContext } from "./context.js";

/**
 * `GET /sessions/:id/eval-compare`: an eval item beside the session it replayed — the turns of
 * both, the diff of their answers and tool calls, and the item's scores (the viewer's compare page).
 */
export function evalCompareRoutes(app: Hono, ctx: RouteContext): void {
  app.get("/sessions/:id/eval-compare", async (c) =>
    c.json(await readEvalCompare(ctx.store, checkedSessionId(c.req.param("id")))),
  );
}
