import { isPodErrorNamed, PodkitPodError } from "../errors.js";

const REF_ERRORS = [
  "PromptRefError",
  "InvalidPromptRefError",
  "UnknownPromptPrefixError",
  "UnconfiguredPromptPrefixError",
  "PromptNotFoundError",
  "PromptIoError",
] as const;

/** Where a reference was written: the including template and the tag's line. */
export interface RefSite {
  readonly template: string;
  readonly line?: number;
}

function siteText(site: RefSite | undefined): string {
  if (!site) return "";
  return ` (included from ${site.template}${site.line === undefined ? "" : `, line ${site.line}`})`;
}

/** Base of every `$prefix` reference failure; names the ref and the including template. */
export class PromptRefError extends PodkitPodError {
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
    super(`${problem}${siteText(site)}`, options);
    this.ref = ref;
    this.includedFrom = site?.template;
    this.line = site?.line;
  }

  static override isInstance(error: unknown): error is PromptRefError {
    return isPodErrorNamed(error, REF_ERRORS);
  }
}

/** Malformed ref: `.`/`..`/empty segments, absolute path, backslash, NUL, escaping symlink. */
export class InvalidPromptRefError extends PromptRefError {
  override name = "InvalidPromptRefError";
  static override isInstance(error: unknown): error is InvalidPromptRefError {
    return isPodErrorNamed(error, ["InvalidPromptRefError"]);
  }
}

/** `$other/x`: a prefix podkit does not know. */
export class UnknownPromptPrefixError extends PromptRefError {
  override name = "UnknownPromptPrefixError";
  static override isInstance(error: unknown): error is UnknownPromptPrefixError {
    return isPodErrorNamed(error, ["UnknownPromptPrefixError"]);
  }
}

/** A known prefix whose root directory is not set or does not exist. */
export class UnconfiguredPromptPrefixError extends PromptRefError {
  override name = "UnconfiguredPromptPrefixError";
  static override isInstance(error: unknown): error is UnconfiguredPromptPrefixError {
    return isPodErrorNamed(error, ["UnconfiguredPromptPrefixError"]);
  }
}

/** The ref is well-formed and its root exists, but the file does not. */
export class PromptNotFoundError extends PromptRefError {
  override name = "PromptNotFoundError";
  readonly file: string;
  constructor(ref: string, file: string, site: RefSite | undefined) {
    super(`prompt file ${ref} not found: ${file} does not exist`, ref, site, {
      hint: "Create the file, or fix the reference (`.md` is added when the name has no extension).",
    });
    this.file = file;
  }
  static override isInstance(error: unknown): error is PromptNotFoundError {
    return isPodErrorNamed(error, ["PromptNotFoundError"]);
  }
}

/** Reading the file failed (permissions, not a file, invalid UTF-8, …). */
export class PromptIoError extends PromptRefError {
  override name = "PromptIoError";
  readonly file: string;
  constructor(ref: string, file: string, problem: string, site: RefSite | undefined, cause?: unknown) {
    super(`cannot read prompt file ${ref} (${file}): ${problem}`, ref, site, { cause });
    this.file = file;
  }
  static override isInstance(error: unknown): error is PromptIoError {
    return isPodErrorNamed(error, ["PromptIoError"]);
  }
}
