import { z } from "zod";
import type { MemoryPaths } from "../records/layout.js";
import { withContainedDir, withExistingDir } from "../store/contained-dir.js";

/**
 * `_staging/.consolidation.failures.json`: how often consolidation failed on each staging file.
 * A run that keeps failing on the same staging (a provider outage, a model that cannot finish)
 * waits before the next attempt instead of running again after every turn.
 */
const FAILURES_NAME = ".consolidation.failures.json";

/** The first wait after a failure; it doubles with every further failure, up to `BACKOFF_MAX_MS`. */
export const BACKOFF_BASE_MS = 5 * 60_000;
export const BACKOFF_MAX_MS = 6 * 60 * 60_000;

const FailuresSchema = z.array(
  z.object({
    id: z.string(),
    failures: z.int().min(1),
    last_failed_at: z.string(),
    last_error: z.string(),
  }),
);
type Failure = z.infer<typeof FailuresSchema>[number];

/** The wait after `failures` consecutive failures. */
export const backoffDelay = (failures: number) =>
  Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1), BACKOFF_MAX_MS);

async function readFailures(paths: MemoryPaths): Promise<Failure[]> {
  const bytes = await withExistingDir(paths.workspace, paths.stagingDir, (dir) =>
    dir.read(FAILURES_NAME, 1024 * 1024),
  ).catch(() => undefined);
  if (bytes === undefined) return [];
  const parsed = FailuresSchema.safeParse(
    (() => {
      try {
        return JSON.parse(bytes.toString("utf8"));
      } catch {
        return undefined;
      }
    })(),
  );
  // A damaged record only loses the wait, never staging.
  return parsed.success ? parsed.data : [];
}

async function writeFailures(paths: MemoryPaths, failures: readonly Failure[]): Promise<void> {
  await withContainedDir(paths.workspace, paths.stagingDir, (dir) =>
    failures.length === 0
      ? dir.remove(FAILURES_NAME)
      : dir.writeAtomic(FAILURES_NAME, JSON.stringify(failures)),
  );
}

/** Why a run on `ids` must wait, or undefined when it may run now. */
export interface Backoff {
  readonly failures: number;
  readonly retryAt: Date;
  readonly lastError: string;
}

/** The wait that applies to a run consuming `ids`: that of its most-failed staging file. */
export async function backoffFor(
  paths: MemoryPaths,
  ids: readonly string[],
  now: Date,
): Promise<Backoff | undefined> {
  const wanted = new Set(ids);
  const worst = (await readFailures(paths))
    .filter((f) => wanted.has(f.id))
    .sort((a, b) => b.failures - a.failures || b.last_failed_at.localeCompare(a.last_failed_at))[0];
  if (worst === undefined) return undefined;
  const retryAt = new Date(Date.parse(worst.last_failed_at) + backoffDelay(worst.failures));
  if (Number.isNaN(retryAt.getTime()) || retryAt <= now) return undefined;
  return { failures: worst.failures, retryAt, lastError: worst.last_error };
}

/** Counts a failed run against each staging file it consumed; returns the new count and wait. */
export async function recordFailure(
  paths: MemoryPaths,
  ids: readonly string[],
  error: string,
  now: Date,
): Promise<Backoff> {
  const failures = await readFailures(paths);
  const byId = new Map(failures.map((f) => [f.id, f]));
  let most = 0;
  for (const id of ids) {
    const count = (byId.get(id)?.failures ?? 0) + 1;
    most = Math.max(most, count);
    byId.set(id, { id, failures: count, last_failed_at: now.toISOString(), last_error: error.slice(0, 500) });
  }
  await writeFailures(paths, [...byId.values()]);
  return { failures: most, retryAt: new Date(now.getTime() + backoffDelay(most)), lastError: error };
}

/** Forgets the failures of staging files that were consumed (or are gone). */
export async function clearFailures(paths: MemoryPaths, consumed: readonly string[]): Promise<void> {
  const failures = await readFailures(paths);
  if (failures.length === 0) return;
  const done = new Set(consumed);
  const kept = failures.filter((f) => !done.has(f.id));
  if (kept.length !== failures.length) await writeFailures(paths, kept);
}
