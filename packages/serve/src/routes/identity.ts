import type { Hono } from "hono";
import { answeredBy } from "../security/credentials.js";
import type { RouteContext } from "./context.js";

/**
 * `GET /identity`: who the server takes the caller for — the holder its token names, or none —
 * and the name an approval answered with this request would be credited to. The viewer shows it
 * beside Allow/Deny, and asks it first to learn whether its token is accepted.
 */
export function identityRoutes(app: Hono, ctx: RouteContext): void {
  app.get("/identity", (c) => {
    const requester = ctx.requester(c.req.header("authorization"));
    return c.json({
      holder: requester.kind === "holder" ? requester.holder : null,
      answersRecordedAs: answeredBy(requester, undefined),
    });
  });
}
