import { type ErrorKind, errorKindOf } from "@podkit/llm-worker";
import { hasMarker, UsageError } from "./errors.js";
import type { TextSink } from "./io.js";

/** Exit code for failures that are podkit's fault, not the user's (sysexits EX_SOFTWARE). */
export const INTERNAL_ERROR_EXIT = 70;

/** Exit code for a wrong command line (the CLI's own `UsageError`). */
const COMMAND_LINE_EXIT = 2;

/**
 * The exit code of each kind of error (docs/errors.md, "Kinds"; docs/cli.md, "Errors and exit
 * codes"): 1 for everything the user can do something about, 70 for a bug of podkit's.
 */
const EXIT_CODE_OF_KIND: Record<ErrorKind, number> = {
  usage: 1,
  not_found: 1,
  conflict: 1,
  corrupt: 1,
  transient: 1,
  unsupported: 1,
  internal: INTERNAL_ERROR_EXIT,
};

/**
 * The exit code for `error`: the CLI's `UsageError` (a wrong command line) 2, any other podkit
 * error the code of its kind, a podkit error without a kind (a copy older than the kinds) 1, and
 * anything else — a bare `Error`, a `TypeError` — 70.
 */
export function exitCodeOf(error: unknown): number {
  if (UsageError.isInstance(error)) return COMMAND_LINE_EXIT;
  const kind = errorKindOf(error);
  if (kind !== undefined) return EXIT_CODE_OF_KIND[kind];
  return isPodkitError(error) ? 1 : INTERNAL_ERROR_EXIT;
}

/**
 * Prints an error the way the CLI promises: `error: <message>` and `hint: <what to do>`, no stack
 * trace unless `debug`, and returns its exit code (`exitCodeOf`). A podkit error's hint is the one
 * it carries (each class sets its own, docs/errors.md). An internal error — anything not podkit's,
 * or a podkit error of kind `internal` — is announced as such and, without a hint of its own, asks
 * for a bug report.
 */
export function reportError(error: unknown, stderr: TextSink, debug: boolean): number {
  const podkit = isPodkitError(error);
  const code = exitCodeOf(error);
  const internal = code === INTERNAL_ERROR_EXIT;
  const message = error instanceof Error ? error.message : String(error);
  const hint =
    (podkit ? hintOf(error) : undefined) ??
    (internal ? "this is a bug in podkit; rerun with --debug and report the stack trace" : undefined);
  stderr.write(`error: ${internal ? "internal error: " : ""}${message}\n`);
  if (hint) stderr.write(`hint: ${hint}\n`);
  else if (!debug) stderr.write("hint: rerun with --debug for details\n");
  if (debug) stderr.write(`\n${stackChain(error)}\n`);
  return code;
}

function isPodkitError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  return Object.getOwnPropertySymbols(error).some(
    (symbol) => symbol.description?.startsWith("podkit.") && hasMarker(error, symbol),
  );
}

function hintOf(error: unknown): string | undefined {
  const hint = (error as { hint?: unknown }).hint;
  return typeof hint === "string" && hint !== "" ? hint : undefined;
}

function stackChain(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 5; depth++) {
    parts.push(e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e));
    e = e instanceof Error ? e.cause : undefined;
    if (e !== undefined) parts.push("Caused by:");
  }
  return parts.join("\n");
}
