import { createHash, timingSafeEqual } from "node:crypto";
import { ServeUsageError } from "../errors.js";

/**
 * A person or service the server knows by a token of its own: the answers it gives are credited
 * to `holder`. The secret is given as is (`token`) or as its SHA-256 in hex (`sha256`), so a list
 * of holders kept in a file need not hold the secrets themselves.
 */
export type ServeTokenHolder = { holder: string } & ({ token: string } | { sha256: string });

/** Who sent a request, as far as the server can tell. */
export type Requester =
  /** A request carrying the token of a named holder. */
  | { kind: "holder"; holder: string }
  /** Nobody the server can name: a loopback server without a token, or the one unnamed token. */
  | { kind: "anonymous"; why: "loopback" | "shared token" };

const HOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$/;
const MIN_TOKEN_LENGTH = 16;

/**
 * The tokens a server accepts, each with its holder (none for `PODKIT_SERVE_TOKEN`, which names
 * nobody). Kept as SHA-256 digests; a presented token is hashed once and compared with every
 * digest in constant time, so neither a token's bytes nor which holder matched shows in the
 * timing.
 */
export class Credentials {
  private constructor(private readonly known: readonly { holder: string | undefined; digest: Buffer }[]) {}

  /**
   * The credentials of `token` (the unnamed one) and `holders`, checked: every token at least 16
   * characters, every holder named once (`ServeUsageError` naming which). Undefined when neither
   * gives any.
   */
  static of(token: string | undefined, holders: readonly ServeTokenHolder[] = []): Credentials | undefined {
    const known: { holder: string | undefined; digest: Buffer }[] = [];
    if (token !== undefined && token !== "") {
      checkLength(token, "PODKIT_SERVE_TOKEN");
      known.push({ holder: undefined, digest: digestOf(token) });
    }
    const named = new Set<string>();
    for (const entry of holders) {
      if (!HOLDER_NAME.test(entry.holder)) {
        throw new ServeUsageError(`invalid token holder name ${JSON.stringify(entry.holder)}`, {
          hint: "a holder's name is 1–64 letters, digits, `.`, `_`, `@`, `+` or `-`, starting with a letter or digit",
        });
      }
      if (named.has(entry.holder)) {
        throw new ServeUsageError(`token holder "${entry.holder}" is listed twice`, {
          hint: "give each holder one token (a name credits answers to one person or service)",
        });
      }
      named.add(entry.holder);
      let digest: Buffer;
      if ("token" in entry) {
        checkLength(entry.token, `the token of "${entry.holder}"`);
        digest = digestOf(entry.token);
      } else {
        if (!/^[0-9a-f]{64}$/i.test(entry.sha256)) {
          throw new ServeUsageError(`the sha256 of token holder "${entry.holder}" is not 64 hex digits`, {
            hint: 'give the SHA-256 of the token in hex, e.g. `printf %s "$TOKEN" | sha256sum`',
          });
        }
        digest = Buffer.from(entry.sha256, "hex");
      }
      const twin = known.find((other) => other.digest.equals(digest));
      if (twin !== undefined) {
        throw new ServeUsageError(
          `token holder "${entry.holder}" has the same token as ${twin.holder === undefined ? "PODKIT_SERVE_TOKEN" : `"${twin.holder}"`}`,
          { hint: "give every holder a token of its own, or answers could not be told apart" },
        );
      }
      known.push({ holder: entry.holder, digest });
    }
    return known.length === 0 ? undefined : new Credentials(known);
  }

  /**
   * Who an `Authorization` header names: the requester, or undefined when it carries no bearer
   * token or one this server does not know.
   */
  requesterOf(authorization: string | undefined): Requester | undefined {
    const given = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
    if (given === undefined) return undefined;
    const digest = digestOf(given);
    let found: { holder: string | undefined } | undefined;
    // Every digest is compared, whichever matches: the time does not say which holder it was.
    for (const entry of this.known) {
      if (timingSafeEqual(digest, entry.digest) && found === undefined) found = entry;
    }
    if (found === undefined) return undefined;
    return found.holder === undefined
      ? { kind: "anonymous", why: "shared token" }
      : { kind: "holder", holder: found.holder };
  }
}

/** The most `by` may hold (the answer schema's bound). */
const MAX_BY = 200;

/**
 * The name an approval answer is credited to. A named holder's answer is the holder's; a name the
 * client claims beside it (`by` in the body: a service relaying a person's click) is kept, marked
 * as coming through that holder — `bob (via slack-bot)`. Where the server can name nobody, the
 * client's `by` is recorded as given, else a label saying so; never the server's own OS user.
 */
export function answeredBy(requester: Requester, claimed: string | undefined): string {
  if (requester.kind === "holder") {
    if (claimed === undefined || claimed === requester.holder) return requester.holder;
    const via = ` (via ${requester.holder})`;
    return `${claimed.slice(0, MAX_BY - via.length)}${via}`;
  }
  return claimed ?? anonymousLabel(requester.why);
}

function anonymousLabel(why: "loopback" | "shared token"): string {
  return why === "loopback" ? "anonymous (loopback, no token)" : "anonymous (shared token)";
}

function digestOf(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}

function checkLength(token: string, what: string): void {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new ServeUsageError(`${what} is too short (under ${MIN_TOKEN_LENGTH} characters)`, {
      hint: "use a long random secret, e.g. `openssl rand -hex 32`",
    });
  }
}
