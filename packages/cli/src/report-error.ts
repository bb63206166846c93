import { hasMarker } from "./errors.js";
import type { TextSink } from "./io.js";

/** Exit code for failures that are podkit's fault, not the user's (sysexits EX_SOFTWARE). */
export const INTERNAL_ERROR_EXIT = 70;

/**
 * Prints an error the way the CLI promises: `error: <message>` and `hint: <what to do>`, no stack
 * trace unless `debug`. Errors from any podkit package (recognised by their
 * `Symbol.for("podkit.<pkg>.error")` marker) are the user's to fix and exit with their own code
 * or 1; their hint is the one the error carries (each class sets its own, docs/errors.md).
 * Anything else is reported as an internal error.
 */
export function reportError(error: unknown, stderr: TextSink, debug: boolean): number {
  const podkit = isPodkitError(error);
  const message = error instanceof Error ? error.message : String(error);
  const hint = podkit
    ? hintOf(error)
    : "this is a bug in podkit; rerun with --debug and report the stack trace";
  stderr.write(`error: ${podkit ? "" : "internal error: "}${message}\n`);
  if (hint) stderr.write(`hint: ${hint}\n`);
  else if (!debug) stderr.write("hint: rerun with --debug for details\n");
  if (debug) stderr.write(`\n${stackChain(error)}\n`);
  if (!podkit) return INTERNAL_ERROR_EXIT;
  const code = (error as { exitCode?: unknown }).exitCode;
  return typeof code === "number" && code > 0 ? code : 1;
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
