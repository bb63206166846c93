import { InvalidPromptRefError, type RefSite, UnknownPromptPrefixError } from "./errors.js";

/** The `$prefix` roots: builtin resources, the user config dir, the workspace. */
export const PROMPT_PREFIXES = ["podkit", "user", "workspace"] as const;
export type PromptPrefix = (typeof PROMPT_PREFIXES)[number];

/** A syntactically valid reference: prefix plus path segments (never `.`, `..` or empty). */
export interface PromptRef {
  readonly prefix: PromptPrefix;
  readonly segments: readonly string[];
  /** Canonical spelling, e.g. `$workspace/common/header.md`; also the template's name. */
  readonly ref: string;
}

/** The file a relative reference is resolved against: its prefix and directory segments. */
export interface PromptOrigin {
  readonly prefix: PromptPrefix;
  readonly directory: readonly string[];
}

/** The origin of a template loaded from `ref` (relative names resolve next to it). */
export function originOf(ref: PromptRef): PromptOrigin {
  return { prefix: ref.prefix, directory: ref.segments.slice(0, -1) };
}

const PREFIXED = /^\$([A-Za-z][A-Za-z0-9_-]*)\/(.*)$/s;

/**
 * Parses `raw` as written in an include or a pack setting. `$prefix/path` is absolute within
 * the prefix; a bare name resolves against `from` (the including file's directory, same prefix)
 * and is an error at top level. `.md` is appended when the last segment has no extension.
 */
export function parsePromptRef(raw: string, from: PromptOrigin | undefined, site?: RefSite): PromptRef {
  const invalid = (why: string) =>
    new InvalidPromptRefError(`invalid prompt reference ${JSON.stringify(raw)}: ${why}`, raw, site, {
      hint: 'Write references as "$podkit/…", "$user/…" or "$workspace/…" with plain `/`-separated names.',
    });
  if (raw.includes("\u0000")) throw invalid("it contains a NUL byte");
  if (raw.includes("\\")) throw invalid("it contains a backslash (use `/`)");
  let prefix: string;
  let segments: string[];
  if (raw.startsWith("$")) {
    const match = PREFIXED.exec(raw);
    if (!match) throw invalid("expected `$prefix/path`");
    prefix = match[1] as string;
    segments = (match[2] as string).split("/");
    if (!(PROMPT_PREFIXES as readonly string[]).includes(prefix)) {
      throw new UnknownPromptPrefixError(
        `unknown prompt prefix $${prefix} in ${JSON.stringify(raw)}; known prefixes: ${PROMPT_PREFIXES.map((p) => `$${p}`).join(", ")}`,
        raw,
        site,
      );
    }
  } else {
    if (raw.startsWith("/") || /^[A-Za-z]:/.test(raw)) throw invalid("absolute paths are not allowed");
    if (!from) {
      throw invalid(
        "a name without a $prefix only works inside a prompt file (it resolves next to that file); write $podkit/…, $user/… or $workspace/…",
      );
    }
    prefix = from.prefix;
    segments = [...from.directory, ...raw.split("/")];
  }
  for (const segment of segments) {
    if (segment === "") throw invalid("empty path segment");
    if (segment === "." || segment === "..") throw invalid(`'${segment}' segments are not allowed`);
  }
  const last = segments.length - 1;
  if (!/\.[A-Za-z0-9]+$/.test(segments[last] as string)) segments[last] = `${segments[last]}.md`;
  return Object.freeze({
    prefix: prefix as PromptPrefix,
    segments: Object.freeze(segments),
    ref: `$${prefix}/${segments.join("/")}`,
  });
}
