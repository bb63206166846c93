import { type ErrorKind, errorKindOf } from "@podkit/llm-worker";
import type { LintDiagnostic } from "./lint/diagnostics.js";

const BASE_MARKER = Symbol.for("podkit.memory.error");

function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Base class of every error thrown by `@podkit/memory`. `isInstance` checks a `Symbol.for`
 * marker, so it works across duplicated copies of the package.
 */
export class MemoryError extends Error {
  readonly [BASE_MARKER] = true;
  /**
   * How a caller treats it (docs/errors.md, "Kinds"): a write or call to fix, unless a class says
   * otherwise or passes the kind its failure has.
   */
  readonly errorKind: ErrorKind;

  constructor(message: string, options?: { cause?: unknown; errorKind?: ErrorKind }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "MemoryError";
    this.errorKind = options?.errorKind ?? "usage";
  }

  static isInstance(value: unknown): value is MemoryError {
    return hasMarker(value, BASE_MARKER);
  }
}

const LINT_MARKER = Symbol.for("podkit.memory.error.lint-rejected");

/** A memory write the linter rejected; nothing was written. `diagnostics` lists every error. */
export class MemoryLintError extends MemoryError {
  readonly [LINT_MARKER] = true;
  readonly diagnostics: readonly LintDiagnostic[];

  constructor(diagnostics: readonly LintDiagnostic[]) {
    super(
      `memory write rejected by the linter, nothing was written:\n${diagnostics
        .map(
          (d) =>
            `- ${d.record}${d.line === undefined ? "" : `:${d.line}`}${d.field === undefined ? "" : ` (${d.field})`}: ${d.message}`,
        )
        .join("\n")}\nFix what is listed and write again.`,
    );
    this.name = "MemoryLintError";
    this.diagnostics = diagnostics;
  }

  static override isInstance(value: unknown): value is MemoryLintError {
    return hasMarker(value, LINT_MARKER);
  }
}

const NOT_FOUND_MARKER = Symbol.for("podkit.memory.error.record-not-found");

/** A memory record addressed by kind and slug does not exist. */
export class MemoryRecordNotFoundError extends MemoryError {
  readonly [NOT_FOUND_MARKER] = true;
  override readonly errorKind: ErrorKind = "not_found";
  readonly kind: string;
  readonly slug: string;

  constructor(kind: string, slug: string, hint: string) {
    super(`no ${kind} record "${slug}" exists; ${hint}`);
    this.name = "MemoryRecordNotFoundError";
    this.kind = kind;
    this.slug = slug;
  }

  static override isInstance(value: unknown): value is MemoryRecordNotFoundError {
    return hasMarker(value, NOT_FOUND_MARKER);
  }
}

const EDIT_MARKER = Symbol.for("podkit.memory.error.edit-mismatch");

/** `memory_edit`'s `old_text` was not found, or found more than once without `replace_all`. */
export class MemoryEditError extends MemoryError {
  readonly [EDIT_MARKER] = true;

  constructor(message: string) {
    super(message);
    this.name = "MemoryEditError";
  }

  static override isInstance(value: unknown): value is MemoryEditError {
    return hasMarker(value, EDIT_MARKER);
  }
}

const WORKER_MARKER = Symbol.for("podkit.memory.error.worker-failed");

/**
 * The extract or consolidation worker failed (provider error, no `write_extracted` call, run
 * limit). Extract leaves its pointer unchanged; consolidation keeps the staging files. Its
 * `errorKind` is its cause's (a provider's refusal, a busy session), else `transient`: the job
 * may well go through on another try.
 */
export class MemoryWorkerError extends MemoryError {
  readonly [WORKER_MARKER] = true;
  readonly job: "extract" | "consolidate";

  constructor(job: "extract" | "consolidate", message: string, options?: { cause?: unknown }) {
    super(message, { ...options, errorKind: errorKindOf(options?.cause) ?? "transient" });
    this.name = "MemoryWorkerError";
    this.job = job;
  }

  static override isInstance(value: unknown): value is MemoryWorkerError {
    return hasMarker(value, WORKER_MARKER);
  }
}

const USAGE_MARKER = Symbol.for("podkit.memory.error.usage");

/** A memory API was called wrongly (bad option, memory not enabled, pod already running). */
export class MemoryUsageError extends MemoryError {
  readonly [USAGE_MARKER] = true;

  constructor(message: string) {
    super(message);
    this.name = "MemoryUsageError";
  }

  static override isInstance(value: unknown): value is MemoryUsageError {
    return hasMarker(value, USAGE_MARKER);
  }
}

const REFUSED_MARKER = Symbol.for("podkit.memory.error.file-refused");

/**
 * A memory file that was not read or not written: it resolves outside `<workspace>/.podkit` (a
 * symbolic link), is larger than a memory file may be, or is not a plain file. The message names
 * the file, where it leads and what to do. `op` says which way was refused.
 */
export class MemoryFileRefusedError extends MemoryError {
  readonly [REFUSED_MARKER] = true;
  readonly op: "read" | "write";

  constructor(problem: string, op: "read" | "write" = "read") {
    super(`memory file not ${op === "read" ? "read" : "written"}: ${problem}`);
    this.op = op;
    this.name = "MemoryFileRefusedError";
  }

  static override isInstance(value: unknown): value is MemoryFileRefusedError {
    return hasMarker(value, REFUSED_MARKER);
  }
}
