import type { ErrorKind } from "@podkit/llm-worker";

const MARKER = Symbol.for("podkit.cli.error");
const USAGE_MARKER = Symbol.for("podkit.cli.error.usage");

/** True when `value` carries `marker`: the one marker check of this package (docs/errors.md). */
export function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Base class of errors raised by the `podkit` command itself (as opposed to the packages it
 * drives). `isInstance()` works across duplicated package copies through a `Symbol.for` marker.
 */
export class PodkitCliError extends Error {
  readonly [MARKER] = true;
  override name = "PodkitCliError";
  /** What to do about it, one line; printed after the message. */
  readonly hint: string | undefined;
  /**
   * How a caller treats it (docs/errors.md, "Kinds"); the exit code follows from it (docs/cli.md).
   * `usage` unless the thrower says otherwise: most are a command, file or environment to fix.
   */
  readonly errorKind: ErrorKind;

  constructor(message: string, options?: { hint?: string; cause?: unknown; errorKind?: ErrorKind }) {
    super(message, { cause: options?.cause });
    this.hint = options?.hint;
    this.errorKind = options?.errorKind ?? "usage";
  }

  static isInstance(error: unknown): error is PodkitCliError {
    return hasMarker(error, MARKER);
  }
}

/**
 * The command line itself is wrong (unknown command or option, missing argument). Of kind `usage`
 * like any input to fix; the CLI gives it an exit code of its own, 2.
 */
export class UsageError extends PodkitCliError {
  readonly [USAGE_MARKER] = true;
  override name = "UsageError";

  constructor(message: string, options: { hint: string; cause?: unknown }) {
    super(message, options);
  }

  static override isInstance(error: unknown): error is UsageError {
    return hasMarker(error, USAGE_MARKER);
  }
}

const OUTPUT_SCHEMA_FILE_MARKER = Symbol.for("podkit.cli.error.output-schema-file");

/**
 * The file `--output-schema` names cannot be the pod's output schema: missing, unreadable, not
 * JSON, or not a JSON Schema with an object at its root (docs/output.md). Nothing was written.
 */
export class OutputSchemaFileError extends PodkitCliError {
  readonly [OUTPUT_SCHEMA_FILE_MARKER] = true;
  override name = "OutputSchemaFileError";
  /** The file as given on the command line. */
  readonly file: string;
  /** What is wrong with it. */
  readonly problem: string;

  constructor(file: string, problem: string, options?: { hint?: string; cause?: unknown }) {
    super(`--output-schema ${file}: ${problem}`, {
      hint:
        options?.hint ??
        'give a JSON file holding a JSON Schema with "type": "object" at its root, relative to the current directory (docs/output.md)',
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.file = file;
    this.problem = problem;
  }

  static override isInstance(error: unknown): error is OutputSchemaFileError {
    return hasMarker(error, OUTPUT_SCHEMA_FILE_MARKER);
  }
}

const SCORER_MODULE_MARKER = Symbol.for("podkit.cli.error.scorer-module");

/**
 * A module `podkit eval --scorer` names cannot be a scorer: missing, failing at import, or not
 * default-exporting a scorer function (docs/evals.md, "Custom scorers"). No item ran.
 */
export class ScorerModuleError extends PodkitCliError {
  readonly [SCORER_MODULE_MARKER] = true;
  override name = "ScorerModuleError";
  /** The file as given on the command line. */
  readonly file: string;
  /** What is wrong with it. */
  readonly problem: string;

  constructor(file: string, problem: string, options?: { hint?: string; cause?: unknown }) {
    super(`--scorer ${file}: ${problem}`, {
      hint:
        options?.hint ??
        "a scorer module default-exports a function (item) => ({ name, score, pass, detail? }), with score in 0..1; the path is relative to the current directory (docs/evals.md)",
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.file = file;
    this.problem = problem;
  }

  static override isInstance(error: unknown): error is ScorerModuleError {
    return hasMarker(error, SCORER_MODULE_MARKER);
  }
}
