/**
 * How a caller should treat a podkit error (docs/errors.md, "Kinds"): `usage` (fix the input or
 * configuration), `not_found`, `conflict` (not now: busy, already answered, running elsewhere),
 * `corrupt` (stored data is damaged), `transient` (may succeed if tried again), `unsupported` (a
 * newer podkit wrote it, or this host lacks what it needs), `internal` (a podkit bug).
 *
 * A copy of `ERROR_KINDS` of @podkit/llm-worker, which defines them: this package depends on no
 * other podkit package. `packages/cli/test/error-kinds.test.ts` holds the copies together.
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
