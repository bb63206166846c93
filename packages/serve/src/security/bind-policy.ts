import { isIPv4, isIPv6 } from "node:net";
import { ServeTokenRequiredError, ServeUsageError } from "../errors.js";

/** True for a host name or address only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare === "localhost") return true;
  if (isIPv4(bare)) return bare.startsWith("127.");
  if (isIPv6(bare)) return bare === "::1" || /^::ffff:127\./i.test(bare);
  return false;
}

/**
 * The token the server requires, decided from where it listens: none on a loopback address, and
 * on any other a non-empty `PODKIT_SERVE_TOKEN` — without one the server refuses to start
 * (`ServeTokenRequiredError`). A token given for a loopback bind is required too.
 */
export function requiredToken(host: string, token: string | undefined): string | undefined {
  if (token !== undefined && token !== "") {
    if (token.length < 16) {
      throw new ServeUsageError("PODKIT_SERVE_TOKEN is too short (under 16 characters)", {
        hint: "use a long random secret, e.g. `openssl rand -hex 32`",
      });
    }
    return token;
  }
  if (!isLoopbackHost(host)) throw new ServeTokenRequiredError(host);
  return undefined;
}
