import { hasMarker, PodkitPodError } from "../errors.js";

/** Where a reference was written: the including template and the tag's line. */
export interface RefSite {
  readonly template: string;
  readonly line?: number;
}

function siteText(site: RefSite | undefined): string {
  if (!site) return "";
  return ` (included from ${site.template}${site.line === undefined ? "" : `, line ${site.line}`})`;
}

const REF_MARKER = Symbol.for("podkit.pod.error.prompt-ref");

/** Base of every `$prefix` reference failure; names the ref and the including template. */
export class PromptRefError extends PodkitPodError {
  readonly [REF_MARKER] = true;
  override name = "PromptRefError";
  readonly ref: string;
  /** The template that wrote the reference, when there is one. */
  readonly includedFrom: string | undefined;
  readonly line: number | undefined;

  constructor(
    problem: string,
    ref: string,
    site: RefSite | undefined,
    options?: { cause?: unknown; hint?: string },
  ) {
    super(`${problem}${siteText(site)}`, {
      ...options,
      hint:
        options?.hint ??
        "prompt references are $podkit/…, $user/… or $workspace/… paths without .. (docs/prompts.md)",
    });
    this.ref = ref;
    this.includedFrom = site?.template;
    this.line = site?.line;
  }

  static override isInstance(error: unknown): error is PromptRefError {
    return hasMarker(error, REF_MARKER);
  }
}

const INVALID_PROMPT_REF_MARKER = Symbol.for("podkit.pod.error.invalid-prompt-ref");

/** Malformed ref: `.`/`..`/empty segments, absolute path, backslash, NUL, escaping symlink. */
export class InvalidPromptRefError extends PromptRefError {
  readonly [INVALID_PROMPT_REF_MARKER] = true;
  override name = "InvalidPromptRefError";
  static override isInstance(error: unknown): error is InvalidPromptRefError {
    return hasMarker(error, INVALID_PROMPT_REF_MARKER);
  }
}

const UNKNOWN_PROMPT_PREFIX_MARKER = Symbol.for("podkit.pod.error.unknown-prompt-prefix");

/** `$other/x`: a prefix podkit does not know. */
export class UnknownPromptPrefixError extends PromptRefError {
  readonly [UNKNOWN_PROMPT_PREFIX_MARKER] = true;
  override name = "UnknownPromptPrefixError";
  static override isInstance(error: unknown): error is UnknownPromptPrefixError {
    return hasMarker(error, UNKNOWN_PROMPT_PREFIX_MARKER);
  }
}

const UNCONFIGURED_PROMPT_PREFIX_MARKER = Symbol.for("podkit.pod.error.unconfigured-prompt-prefix");

/** A known prefix whose root directory is not set or does not exist. */
export class UnconfiguredPromptPrefixError extends PromptRefError {
  readonly [UNCONFIGURED_PROMPT_PREFIX_MARKER] = true;
  override name = "UnconfiguredPromptPrefixError";
  static override isInstance(error: unknown): error is UnconfiguredPromptPrefixError {
    return hasMarker(error, UNCONFIGURED_PROMPT_PREFIX_MARKER);
  }
}

const PROMPT_NOT_FOUND_MARKER = Symbol.for("podkit.pod.error.prompt-not-found");

/** The ref is well-formed and its root exists, but the file does not. */
export class PromptNotFoundError extends PromptRefError {
  readonly [PROMPT_NOT_FOUND_MARKER] = true;
  override name = "PromptNotFoundError";
  readonly file: string;
  constructor(ref: string, file: string, site: RefSite | undefined) {
    super(`prompt file ${ref} not found: ${file} does not exist`, ref, site, {
      hint: "Create the file, or fix the reference (`.md` is added when the name has no extension).",
    });
    this.file = file;
  }
  static override isInstance(error: unknown): error is PromptNotFoundError {
    return hasMarker(error, PROMPT_NOT_FOUND_MARKER);
  }
}

const PROMPT_IO_MARKER = Symbol.for("podkit.pod.error.prompt-io");

/** Reading the file failed (permissions, not a file, invalid UTF-8, …). */
export class PromptIoError extends PromptRefError {
  readonly [PROMPT_IO_MARKER] = true;
  override name = "PromptIoError";
  readonly file: string;
  constructor(ref: string, file: string, problem: string, site: RefSite | undefined, cause?: unknown) {
    super(`cannot read prompt file ${ref} (${file}): ${problem}`, ref, site, { cause });
    this.file = file;
  }
  static override isInstance(error: unknown): error is PromptIoError {
    return hasMarker(error, PROMPT_IO_MARKER);
  }
}

const ROOT_ESCAPE_MARKER = Symbol.for("podkit.pod.error.prompt-root-escape");

/**
 * A prefix root (or a directory on the way to it) is a symbolic link leading outside the
 * directory that owns it — `.podkit` or `.podkit/prompts` pointing out of the workspace, say —
 * so every reference under that root is refused.
 */
export class PromptRootEscapeError extends PromptRefError {
  readonly [ROOT_ESCAPE_MARKER] = true;
  override name = "PromptRootEscapeError";
  /** The path component that is the link, e.g. `/ws/.podkit`. */
  readonly link: string;
  /** Where the link really points. */
  readonly target: string;

  constructor(
    ref: string,
    prefix: string,
    breach: { link: string; target: string; owner: string },
    site: RefSite | undefined,
  ) {
    super(
      `the $${prefix} prompt root is refused, so ${ref} cannot be read: ${breach.link} resolves to ${breach.target} (through a symbolic link), outside ${breach.owner} that owns it`,
      ref,
      site,
      { hint: `Make ${breach.link} a real directory inside ${breach.owner}, or remove the link.` },
    );
    this.link = breach.link;
    this.target = breach.target;
  }

  static override isInstance(error: unknown): error is PromptRootEscapeError {
    return hasMarker(error, ROOT_ESCAPE_MARKER);
  }
}
