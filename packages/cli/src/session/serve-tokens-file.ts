import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { ServeTokenHolder } from "@podkit/serve";
import { PodkitCliError } from "../errors.js";

const HOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$/;

/**
 * Reads `podkit serve --tokens-file` (or `PODKIT_SERVE_TOKENS_FILE`): one holder a line,
 * `<name> <token>` or `<name> sha256:<hex digest of the token>`; blank lines and `#` comments are
 * skipped. A malformed line is an error naming the file and line. `warn` is told when the file
 * holds tokens in the clear and other users of the machine can read it.
 */
export async function readServeTokensFile(
  file: string,
  cwd: string,
  warn: (message: string) => void,
): Promise<ServeTokenHolder[]> {
  const path = resolve(cwd, file);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new PodkitCliError(`cannot read the tokens file ${path}: ${(error as Error).message}`, {
      hint: 'write one holder a line: "<name> <token>" (see docs/serve.md, Security)',
      cause: error,
    });
  }
  const holders: ServeTokenHolder[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const where = `${path}:${index + 1}`;
    const fields = line.split(/\s+/);
    const [holder, secret] = fields as [string, string | undefined];
    if (fields.length !== 2 || secret === undefined) {
      throw new PodkitCliError(`${where}: expected "<name> <token>", got ${fields.length} field(s)`, {
        hint: 'one holder a line: a name, a space, then the token or "sha256:<hex>"',
      });
    }
    if (!HOLDER_NAME.test(holder)) {
      throw new PodkitCliError(`${where}: invalid holder name ${JSON.stringify(holder)}`, {
        hint: "a name is 1–64 letters, digits, `.`, `_`, `@`, `+` or `-`, starting with a letter or digit",
      });
    }
    if (secret.startsWith("sha256:")) {
      const sha256 = secret.slice("sha256:".length);
      if (!/^[0-9a-f]{64}$/i.test(sha256)) {
        throw new PodkitCliError(`${where}: the sha256 of "${holder}" is not 64 hex digits`, {
          hint: 'e.g. `printf %s "$TOKEN" | sha256sum`',
        });
      }
      holders.push({ holder, sha256 });
    } else {
      if (secret.length < 16) {
        throw new PodkitCliError(`${where}: the token of "${holder}" is too short (under 16 characters)`, {
          hint: "use a long random secret, e.g. `openssl rand -hex 32`",
        });
      }
      holders.push({ holder, token: secret });
    }
  }
  if (holders.length === 0) {
    throw new PodkitCliError(`the tokens file ${path} names no holder`, {
      hint: 'write one holder a line: "<name> <token>"',
    });
  }
  const mode = (await stat(path)).mode;
  if ((mode & 0o077) !== 0 && holders.some((entry) => "token" in entry)) {
    warn(
      `${path} holds tokens in the clear and other users of this machine can read it: chmod 600 it, or list "sha256:<hex>" digests instead`,
    );
  }
  return holders;
}
