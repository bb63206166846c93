import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

/**
 * Hono's `bodyLimit`, except that a request without a body (GET, HEAD) or one that declares its
 * length (and is not chunked) is decided by its headers alone: `bodyLimit` looks at `raw.body`,
 * which makes @hono/node-server build a web `Request` and stream the body through it instead of
 * reading it directly — most of what a small JSON POST cost the server (bench/serve.bench.mjs).
 * Node's HTTP parser holds a body to its `Content-Length`, so the header is the body's size. A
 * chunked body goes through `bodyLimit`, which counts it as it arrives.
 */
export function bodyCap(
  maxSize: number,
  onError: (c: Context) => Response | Promise<Response>,
): MiddlewareHandler {
  const counted = bodyLimit({ maxSize, onError });
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined) {
      return Number(length) > maxSize ? onError(c) : next();
    }
    return counted(c, next);
  };
}
