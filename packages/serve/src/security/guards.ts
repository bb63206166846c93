import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { errorResponse } from "../http/http-error.js";
import { isLoopbackHost } from "./bind-policy.js";

/** Paths anyone may fetch: the viewer's page and assets hold no session data. */
function isPublic(path: string): boolean {
  return path === "/" || path.startsWith("/assets/");
}

/**
 * Requires `Authorization: Bearer <token>` on every API route (the viewer's page asks for the
 * token and sends it). Compared in constant time.
 */
export function bearerToken(token: string): MiddlewareHandler {
  const expected = createHash("sha256").update(token).digest();
  return async (c, next) => {
    if (isPublic(c.req.path) || c.req.method === "OPTIONS") return next();
    const header = c.req.header("authorization") ?? "";
    const given = /^Bearer (.+)$/.exec(header)?.[1];
    const ok = given !== undefined && timingSafeEqual(createHash("sha256").update(given).digest(), expected);
    if (!ok) {
      c.header("WWW-Authenticate", 'Bearer realm="podkit"');
      return errorResponse(
        c,
        401,
        "missing or wrong bearer token",
        "send `Authorization: Bearer $PODKIT_SERVE_TOKEN`",
      );
    }
    return next();
  };
}

/**
 * On a loopback bind without a token, answers only requests addressed to this machine by a
 * loopback name and the server's port (`Host: 127.0.0.1:<port>`, any address of 127.0.0.0/8,
 * `localhost:<port>`, `[::1]:<port>`): a web page whose own host name resolves to 127.0.0.1 (DNS
 * rebinding) cannot read or run sessions through the visitor's browser.
 */
export function loopbackHostOnly(port: () => number): MiddlewareHandler {
  return async (c, next) => {
    const host = (c.req.header("host") ?? "").toLowerCase();
    if (!isLoopbackAuthority(host, port())) {
      return errorResponse(
        c,
        403,
        `unexpected Host header ${JSON.stringify(host)}`,
        `open http://127.0.0.1:${port()}/`,
      );
    }
    return next();
  };
}

/** True for a `Host` header naming a loopback host and exactly `port` (`127.0.0.2:4111`, `[::1]:4111`). */
function isLoopbackAuthority(authority: string, port: number): boolean {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+):([0-9]{1,5})$/.exec(authority);
  if (match === null) return false;
  return Number(match[2]) === port && isLoopbackHost(match[1] as string);
}
