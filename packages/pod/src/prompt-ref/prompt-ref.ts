import { PROMPT_PREFIXES, type PromptPrefix, spellPromptRef } from "@podkit/manifest";
import { InvalidPromptRefError, type RefSite, UnknownPromptPrefixError } from "./errors.js";

export { PROMPT_PREFIXES, type PromptPrefix };

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

/**
 * Parses `raw` as written in an include or a pack setting, with the spelling rules the manifest
 * checks too (`spellPromptRef`). `$prefix/path` is absolute within the prefix; a bare name
 * resolves against `from` (the including file's directory, same prefix) and is an error at top
 * level. `.md` is appended when the last segment has no extension.
 */
export function parsePromptRef(raw: string, from: PromptOrigin | undefined, site?: RefSite): PromptRef {
  const invalid = (why: string) =>
    new InvalidPromptRefError(`invalid prompt reference ${JSON.stringify(raw)}: ${why}`, raw, site, {
      hint: 'Write references as "$podkit/…", "$user/…" or "$workspace/…" with plain `/`-separated names.',
    });
  const spelled = spellPromptRef(raw);
  if (spelled.kind === "invalid") throw invalid(spelled.problem);
  if (spelled.kind === "unknown_prefix") {
    throw new UnknownPromptPrefixError(`${spelled.problem} (in ${JSON.stringify(raw)})`, raw, site);
  }
  let prefix: PromptPrefix;
  let segments: string[];
  if (spelled.kind === "prefixed") {
    prefix = spelled.prefix;
    segments = [...spelled.segments];
  } else {
    if (!from) {
      throw invalid(
        "a name without a $prefix only works inside a prompt file (it resolves next to that file); write $podkit/…, $user/… or $workspace/…",
      );
    }
    prefix = from.prefix;
    segments = [...from.directory, ...spelled.segments];
  }
  const last = segments.length - 1;
  if (!/\.[A-Za-z0-9]+$/.test(segments[last] as string)) segments[last] = `${segments[last]}.md`;
  return Object.freeze({
    prefix,
    segments: Object.freeze(segments),
    ref: `$${prefix}/${segments.join("/")}`,
  });
}
