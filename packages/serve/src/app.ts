import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import { Hono } from "hono";
import { cors } from "hono/cors";
import type { FeedHub } from "./feed/feed-hub.js";
import type { SessionListFeed } from "./feed/session-list-feed.js";
import { bodyCap } from "./http/body-cap.js";
import { respondToError } from "./http/error-mapping.js";
import { errorResponse } from "./http/http-error.js";
import { chatRoutes } from "./routes/chat.js";
import type { RouteContext } from "./routes/context.js";
import { evalCompareRoutes } from "./routes/eval-compare.js";
import { eventRoutes } from "./routes/events.js";
import { identityRoutes } from "./routes/identity.js";
import { mediaRoutes } from "./routes/media.js";
import { rewindRoutes } from "./routes/rewind.js";
import { sessionRoutes } from "./routes/sessions.js";
import { viewerRoutes } from "./routes/viewer.js";
import type { SessionRuns } from "./runs/session-runs.js";
import type { Credentials, Requester } from "./security/credentials.js";
import { bearerToken, loopbackHostOnly } from "./security/guards.js";

export interface AppOptions {
  store: Store<Item>;
  runs: SessionRuns;
  hub: FeedHub;
  list: SessionListFeed;
  /** The tokens the server accepts; none on a loopback server without a token. */
  credentials: Credentials | undefined;
  corsOrigins: readonly string[];
  maxBodyBytes: number;
  maxStreams: number;
  keepaliveMs: number;
  /** The directory the pods work in: where `POST /sessions/:id/rewind` restores files. */
  workspace: string | undefined;
  /** The port the server listens on (known after it started), for the Host check. */
  port: () => number;
  onUnexpectedError: (error: unknown) => void;
  onWarning: (message: string) => void;
}

/**
 * The HTTP application: CORS only for listed origins, the Host check of an open loopback server
 * or the bearer token, the 1 MiB body cap, then the session, rewind, event, chat and viewer routes.
 */
export function createApp(options: AppOptions): Hono {
  const app = new Hono();
  if (options.corsOrigins.length > 0) {
    app.use(
      cors({
        origin: [...options.corsOrigins],
        allowMethods: ["GET", "POST"],
        allowHeaders: ["Authorization", "Content-Type", "Last-Event-ID"],
        maxAge: 600,
      }),
    );
  }
  const { credentials } = options;
  app.use(credentials === undefined ? loopbackHostOnly(options.port) : bearerToken(credentials));
  app.use(
    bodyCap(options.maxBodyBytes, (c) => {
      // The rest of the body is never read: the connection cannot carry another request.
      c.header("connection", "close");
      return errorResponse(c, 413, `the request body exceeds ${options.maxBodyBytes} bytes`);
    }),
  );
  const ctx: RouteContext = {
    store: options.store,
    runs: options.runs,
    hub: options.hub,
    list: options.list,
    // Past the guard above: a request without a known token reaches a route only on loopback.
    requester: (authorization): Requester =>
      credentials?.requesterOf(authorization) ?? { kind: "anonymous", why: "loopback" },
    streams: { open: 0, max: options.maxStreams },
    keepaliveMs: options.keepaliveMs,
    workspace: options.workspace,
    warn: options.onWarning,
  };
  sessionRoutes(app, ctx);
  evalCompareRoutes(app, ctx);
  rewindRoutes(app, ctx);
  mediaRoutes(app, ctx);
  eventRoutes(app, ctx);
  chatRoutes(app, ctx);
  identityRoutes(app, ctx);
  viewerRoutes(app);
  app.notFound((c) =>
    errorResponse(c, 404, `no route ${c.req.method} ${c.req.path}`, "see docs/serve.md for the API"),
  );
  app.onError((error, c) => respondToError(c, error, options.onUnexpectedError));
  return app;
}
