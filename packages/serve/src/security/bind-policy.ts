import { isIPv4, isIPv6 } from "node:net";
import { ServeTokenRequiredError } from "../errors.js";
import { Credentials, type ServeTokenHolder } from "./credentials.js";

/** True for a host name or address only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare === "localhost") return true;
  if (isIPv4(bare)) return bare.startsWith("127.");
  if (isIPv6(bare)) return bare === "::1" || /^::ffff:127\./i.test(bare);
  return false;
}

/**
 * The tokens the server requires, decided from where it listens: none on a loopback address, and
 * on any other at least one — `PODKIT_SERVE_TOKEN` or a named holder's; without one the server
 * refuses to start (`ServeTokenRequiredError`). Tokens given for a loopback bind are required too.
 */
export function requiredCredentials(
  host: string,
  token: string | undefined,
  holders: readonly ServeTokenHolder[] | undefined,
): Credentials | undefined {
  const credentials = Credentials.of(token, holders);
  if (credentials === undefined && !isLoopbackHost(host)) throw new ServeTokenRequiredError(host);
  return credentials;
}
