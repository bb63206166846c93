import type { ErrorKind } from "./error-kinds.js";

const MARKER = Symbol.for("podkit.manifest.error");
const MANIFEST_MARKER = Symbol.for("podkit.manifest.error.manifest");
const SCOPE_MARKER = Symbol.for("podkit.manifest.error.scope");
const WORKSPACE_MARKER = Symbol.for("podkit.manifest.error.workspace-not-found");

function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Base class of every error thrown by `@podkit/manifest`. `isInstance()` recognises errors
 * from duplicated copies of the package through a `Symbol.for` marker, not `instanceof`.
 */
export class PodkitManifestError extends Error {
  readonly [MARKER] = true;
  override name = "PodkitManifestError";
  /** What the user can do about it, one line; the CLI prints it after the message. */
  readonly hint: string | undefined;
  /** How a caller treats it (docs/errors.md, "Kinds"): a manifest to fix, for every class here. */
  readonly errorKind: ErrorKind = "usage";

  constructor(message: string, options?: { cause?: unknown; hint?: string }) {
    super(message, { cause: options?.cause });
    this.hint = options?.hint;
  }

  /** True for any error thrown by this package, whichever copy of it threw. */
  static isInstance(error: unknown): error is PodkitManifestError {
    return hasMarker(error, MARKER);
  }
}

/** Which stage of loading rejected the manifest. */
export type ManifestErrorKind = "io" | "syntax" | "schema" | "overlay" | "scope";

/** One problem found in one layer; a `ManifestError` carries one or more. */
export interface ManifestIssue {
  /** Absolute path of the file that holds the problem; absent for `--set` overlays. */
  file?: string;
  /** The `--set key=value` text, for problems in an overlay. */
  overlay?: string;
  /** 1-based line in `file`, where it could be found. */
  line?: number;
  /** 1-based column (TOML syntax errors only). */
  column?: number;
  /** Dotted key path with list indices, e.g. `scope.allow[1].permission`. */
  keyPath?: string;
  /** The problem alone, without location (e.g. `expected "read" | "write", got "exec"`). */
  problem: string;
  /** The offending source line, for syntax errors. */
  sourceLine?: string;
}

/**
 * The manifest (or one of its layers, or a `--set` overlay) is unusable. The message names the
 * file, line and key of every problem; `file`/`line`/`column`/`keyPath` describe the first one.
 */
export class ManifestError extends PodkitManifestError {
  readonly [MANIFEST_MARKER] = true;
  override name = "ManifestError";
  readonly kind: ManifestErrorKind;
  readonly issues: readonly ManifestIssue[];
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;
  readonly keyPath: string | undefined;

  constructor(
    message: string,
    options: { kind: ManifestErrorKind; issues: ManifestIssue[]; hint?: string; cause?: unknown },
  ) {
    super(message, { cause: options.cause, hint: options.hint });
    this.kind = options.kind;
    this.issues = options.issues;
    const first = options.issues[0];
    this.file = first?.file;
    this.line = first?.line;
    this.column = first?.column;
    this.keyPath = first?.keyPath;
  }

  static override isInstance(error: unknown): error is ManifestError {
    return hasMarker(error, MANIFEST_MARKER);
  }
}

/** Why a scope rule target could not be turned into a canonical path. */
export type ScopeTargetProblem = "relative-without-base" | "parent-traversal" | "unresolvable";

/** A scope rule handed to `Scope.fromRules` has a target that cannot be canonicalized. */
export class ScopeError extends PodkitManifestError {
  readonly [SCOPE_MARKER] = true;
  override name = "ScopeError";
  readonly target: string;
  readonly problem: ScopeTargetProblem;

  constructor(
    message: string,
    options: { target: string; problem: ScopeTargetProblem; hint?: string; cause?: unknown },
  ) {
    super(message, { cause: options.cause, hint: options.hint });
    this.target = options.target;
    this.problem = options.problem;
  }

  static override isInstance(error: unknown): error is ScopeError {
    return hasMarker(error, SCOPE_MARKER);
  }
}

/** The workspace given explicitly (`--workspace`, the `workspace` option) is not a directory. */
export class WorkspaceNotFoundError extends PodkitManifestError {
  readonly [WORKSPACE_MARKER] = true;
  override name = "WorkspaceNotFoundError";

  constructor(message: string, options?: { cause?: unknown; hint?: string }) {
    super(message, {
      ...options,
      hint: options?.hint ?? "pass --workspace an existing directory, or leave it out",
    });
  }

  static override isInstance(error: unknown): error is WorkspaceNotFoundError {
    return hasMarker(error, WORKSPACE_MARKER);
  }
}
