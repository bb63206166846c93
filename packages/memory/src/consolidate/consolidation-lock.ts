import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";

/** What `.consolidation.lock` holds: who runs, since when, and which staging files it consumes. */
export interface LockInfo {
  pid: number;
  host: string;
  token: string;
  started_at: string;
  staging_ids: string[];
}

export type LockAttempt = { acquired: true; lock: ConsolidationLock } | { acquired: false; holder: LockInfo };

function processAlive(pid: number): boolean {
  // 0 and negative pids address process groups, never one process.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * How long an unreadable (empty, torn, garbage) lock file counts as held. Locks are linked into
 * place whole, so one is only seen by a writer of an older version mid-write or after a crash
 * that corrupted it; the first is young, the second is old.
 */
export const TORN_LOCK_GRACE_MS = 60_000;

async function readLock(file: string, now = Date.now()): Promise<LockInfo | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as LockInfo;
  } catch {
    const age = await stat(file).then(
      (s) => now - s.mtimeMs,
      () => Number.POSITIVE_INFINITY,
    );
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
}

/** A held consolidation lock. */
export class ConsolidationLock {
  private constructor(
    readonly file: string,
    readonly info: LockInfo,
  ) {}

  /**
   * Takes the lock recording the staging ids this run consumes: the whole record is written to a
   * private temp file and hard-linked into place (link never replaces), so no other process can
   * ever read a half-written lock of ours. A lock whose
   * process is gone (same host, pid not alive) is stale and taken over; a live one is reported
   * as its holder. Never waits.
   */
  static async acquire(file: string, stagingIds: readonly string[], now: Date): Promise<LockAttempt> {
    await mkdir(dirname(file), { recursive: true });
    const info: LockInfo = {
      pid: process.pid,
      host: hostname(),
      token: randomBytes(8).toString("hex"),
      started_at: now.toISOString(),
      staging_ids: [...stagingIds],
    };
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await ConsolidationLock.linkInPlace(file, info)) {
        return { acquired: true, lock: new ConsolidationLock(file, info) };
      }
      const holder = await readLock(file);
      if (holder === undefined) continue;
      if (holder.host !== info.host || processAlive(holder.pid)) return { acquired: false, holder };
      await ConsolidationLock.takeOver(file, holder);
    }
    const holder = await readLock(file);
    return { acquired: false, holder: holder ?? { ...info, pid: -1 } };
  }

  /** Writes `info` to a temp file beside `file` and links it to `file`; false when `file` exists. */
  private static async linkInPlace(file: string, info: LockInfo): Promise<boolean> {
    const temp = `${file}.tmp-${info.token}-${randomBytes(4).toString("hex")}`;
    await writeFile(temp, `${JSON.stringify(info)}\n`, { flag: "wx" });
    try {
      await link(temp, file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  /**
   * Moves a stale lock aside under a unique name (rename is atomic: of two processes taking
   * over, one moves it). If what was moved turns out to be a fresh lock someone else just took,
   * it is put back.
   */
  private static async takeOver(file: string, stale: LockInfo): Promise<void> {
    const aside = `${file}.stale-${randomBytes(6).toString("hex")}`;
    try {
      await rename(file, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    const moved = await readLock(aside);
    if (moved !== undefined && moved.token !== stale.token) {
      await rename(aside, file);
      return;
    }
    await unlink(aside).catch(() => undefined);
  }

  /** Removes the lock if it is still this run's. */
  async release(): Promise<void> {
    const current = await readLock(this.file);
    if (current?.token === this.info.token) await unlink(this.file).catch(() => undefined);
  }
}
