/**
 * How a caller should treat a podkit error, whatever package threw it (docs/errors.md, "Kinds"):
 *
 * - `usage`: the input or the configuration is wrong; fix it (a retry fails the same way).
 * - `not_found`: what the caller named (a session, an approval, a run, a record) does not exist.
 * - `conflict`: the state does not allow it now: busy, already answered, running elsewhere, a
 *   lease lost, another writer in between.
 * - `corrupt`: stored data is damaged.
 * - `transient`: may succeed if tried again: the network, a provider's 5xx or 429, a database away.
 * - `unsupported`: not supported here: written by a newer podkit, or needing what this host lacks.
 * - `internal`: a podkit bug.
 *
 * Every podkit error carries one as `errorKind`, and the CLI's exit codes, `podkit serve`'s HTTP
 * statuses and the dispatcher's retry decision each read it through a table of their own. The
 * packages that depend on no other podkit package (manifest, session-store, testkit) declare a
 * copy; `packages/cli/test/error-kinds.test.ts` holds the copies together.
 */
export const ERROR_KINDS = [
  "usage",
  "not_found",
  "conflict",
  "corrupt",
  "transient",
  "unsupported",
  "internal",
] as const;

/** One of `ERROR_KINDS`: how a caller should treat an error. */
export type ErrorKind = (typeof ERROR_KINDS)[number];

/**
 * The kind of a podkit error — of any podkit package, from any copy of it (a `Symbol.for("podkit.…")`
 * marker and an `errorKind` of the vocabulary) — or undefined for anything else: a bare `Error`, a
 * `TypeError`, or a podkit error from a release older than the kinds. Never reads a kind off an
 * error that is not podkit's, whatever fields it has.
 */
export function errorKindOf(error: unknown): ErrorKind | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const podkit = Object.getOwnPropertySymbols(error).some(
    (symbol) => symbol.description?.startsWith("podkit.") && hasMarker(error, symbol),
  );
  if (!podkit) return undefined;
  const kind = (error as { errorKind?: unknown }).errorKind;
  return (ERROR_KINDS as readonly unknown[]).includes(kind) ? (kind as ErrorKind) : undefined;
}

/** True when `value` carries `marker`: the one marker check of this package (docs/errors.md). */
export function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}
