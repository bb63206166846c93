import type { MiddlewareHandler } from "hono";
import { errorResponse } from "../http/http-error.js";
import { isLoopbackHost } from "./bind-policy.js";
import type { Credentials } from "./credentials.js";

/** Paths anyone may fetch: the viewer's page and assets hold no session data. */
function isPublic(path: string): boolean {
  return path === "/" || path.startsWith("/assets/");
}

/**
 * Requires `Authorization: Bearer <token>` with a token the server knows on every API route (the
 * viewer's page asks for the token and sends it). Compared in constant time (`Credentials`). The
 * 401 says whether a token was missing or not accepted, and what to do.
 */
export function bearerToken(credentials: Credentials): MiddlewareHandler {
  return async (c, next) => {
    if (isPublic(c.req.path) || c.req.method === "OPTIONS") return next();
    const header = c.req.header("authorization");
    if (credentials.requesterOf(header) !== undefined) return next();
    c.header("WWW-Authenticate", 'Bearer realm="podkit"');
    return header === undefined || !/^Bearer ./.test(header)
      ? errorResponse(
          c,
          401,
          "this server needs a bearer token",
          "send `Authorization: Bearer <token>`: PODKIT_SERVE_TOKEN, or your own token from the server's tokens file",
        )
      : errorResponse(
          c,
          401,
          "this bearer token is not accepted here",
          "check it for a typo or a stray space; ask whoever runs the server for a token of your own",
        );
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
