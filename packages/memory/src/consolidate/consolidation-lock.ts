import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { basename, dirname } from "node:path";
import { z } from "zod";
import { type ContainedDir, withContainedDir } from "../store/contained-dir.js";
import { processAlive } from "../store/process-alive.js";

/** What `.consolidation.lock` holds: who runs, since when, and which staging files it consumes. */
export const LockInfoSchema = z.object({
  pid: z.int(),
  host: z.string(),
  token: z.string(),
  started_at: z.string(),
  staging_ids: z.array(z.string()),
});
export type LockInfo = z.infer<typeof LockInfoSchema>;

export type LockAttempt = { acquired: true; lock: ConsolidationLock } | { acquired: false; holder: LockInfo };

/**
 * How long an unreadable (empty, torn, garbage) lock file counts as held. Locks are linked into
 * place whole, so one is only seen by a writer of an older version mid-write or after a crash
 * that corrupted it; the first is young, the second is old.
 */
export const TORN_LOCK_GRACE_MS = 60_000;

const LOCK_MAX_BYTES = 64 * 1024;

async function readLock(dir: ContainedDir, name: string, now = Date.now()): Promise<LockInfo | undefined> {
  const bytes = await dir.read(name, LOCK_MAX_BYTES).catch(() => Buffer.from(""));
  if (bytes === undefined) return undefined;
  let parsed: LockInfo | undefined;
  try {
    parsed = LockInfoSchema.parse(JSON.parse(bytes.toString("utf8")));
  } catch {
    parsed = undefined;
  }
  if (parsed !== undefined) return parsed;
  const stats = await dir.stat(name);
  if (stats === undefined) return undefined;
  const age = now - stats.mtimeMs;
  // pid 0 is never alive (processAlive), so an old torn lock is stale; a young one is held by
  // an unknown live writer (a different host makes it held whatever its pid).
  return {
    pid: 0,
    host: age < TORN_LOCK_GRACE_MS ? "(unreadable lock file, being written)" : hostname(),
    token: "",
    started_at: "",
    staging_ids: [],
  };
}

/**
 * A held consolidation lock. Every file operation goes through the staging directory opened and
 * verified inside `.podkit` (`ContainedDir`): a staging directory linked elsewhere gets no lock.
 */
export class ConsolidationLock {
  private constructor(
    private readonly workspace: string,
    readonly file: string,
    readonly info: LockInfo,
  ) {}

  /**
   * Takes the lock recording the staging ids this run consumes: the whole record is written to a
   * private temp file and hard-linked into place (link never replaces), so no other process can
   * ever read a half-written lock of ours. A lock whose process is gone (same host, pid not
   * alive) is stale and taken over; a live one is reported as its holder. Never waits.
   */
  static async acquire(
    workspace: string,
    file: string,
    stagingIds: readonly string[],
    now: Date,
  ): Promise<LockAttempt> {
    const info: LockInfo = {
      pid: process.pid,
      host: hostname(),
      token: randomBytes(8).toString("hex"),
      started_at: now.toISOString(),
      staging_ids: [...stagingIds],
    };
    const name = basename(file);
    return withContainedDir(workspace, dirname(file), async (dir) => {
      for (let attempt = 0; attempt < 3; attempt++) {
        if (await ConsolidationLock.linkInPlace(dir, name, info)) {
          return { acquired: true, lock: new ConsolidationLock(workspace, file, info) };
        }
        const holder = await readLock(dir, name);
        if (holder === undefined) continue;
        if (holder.host !== info.host || processAlive(holder.pid)) return { acquired: false, holder };
        await ConsolidationLock.takeOver(dir, name, holder);
      }
      const holder = await readLock(dir, name);
      return { acquired: false, holder: holder ?? { ...info, pid: -1 } };
    });
  }

  /** Writes `info` to a temp file beside the lock and links it into place; false when the lock exists. */
  private static async linkInPlace(dir: ContainedDir, name: string, info: LockInfo): Promise<boolean> {
    const temp = `${name}.tmp-${info.token}-${randomBytes(4).toString("hex")}`;
    await dir.writeNew(temp, `${JSON.stringify(info)}\n`);
    try {
      return await dir.linkExclusive(temp, name);
    } finally {
      await dir.remove(temp).catch(() => undefined);
    }
  }

  /**
   * Moves a stale lock aside under a unique name (rename is atomic: of two processes taking
   * over, one moves it). If what was moved turns out to be a fresh lock someone else just took,
   * it is put back.
   */
  private static async takeOver(dir: ContainedDir, name: string, stale: LockInfo): Promise<void> {
    const aside = `${name}.stale-${randomBytes(6).toString("hex")}`;
    try {
      await dir.rename(name, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    const moved = await readLock(dir, aside);
    if (moved !== undefined && moved.token !== stale.token) {
      await dir.rename(aside, name);
      return;
    }
    await dir.remove(aside).catch(() => undefined);
  }

  /** Removes the lock if it is still this run's. */
  async release(): Promise<void> {
    await withContainedDir(this.workspace, dirname(this.file), async (dir) => {
      const current = await readLock(dir, basename(this.file));
      if (current?.token === this.info.token) await dir.remove(basename(this.file)).catch(() => undefined);
    });
  }
}
