import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
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

async function readLock(file: string): Promise<LockInfo | undefined> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as LockInfo;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    // Torn or garbage: treat as held by nobody alive.
    return { pid: -1, host: hostname(), token: "", started_at: "", staging_ids: [] };
  }
}

/** A held consolidation lock. */
export class ConsolidationLock {
  private constructor(
    readonly file: string,
    readonly info: LockInfo,
  ) {}

  /**
   * Takes the lock (`O_EXCL` create) recording the staging ids this run consumes. A lock whose
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
      try {
        await writeFile(file, `${JSON.stringify(info)}\n`, { flag: "wx" });
        return { acquired: true, lock: new ConsolidationLock(file, info) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = await readLock(file);
      if (holder === undefined) continue;
      if (holder.host !== info.host || processAlive(holder.pid)) return { acquired: false, holder };
      await ConsolidationLock.takeOver(file, holder);
    }
    const holder = await readLock(file);
    return { acquired: false, holder: holder ?? { ...info, pid: -1 } };
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
