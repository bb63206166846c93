import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { LockTimeoutError, NotFoundError } from "../errors.js";
import { errorCode, type SyncFs } from "./sync-fs.js";

/** How a segment's append lock is taken. */
export interface LockPolicy {
  fs: SyncFs;
  /** Written into the lock file; the liveness check of other processes looks at it. */
  pid: number;
  /** Bounded wait for a lock held by a live process. */
  timeoutMs: number;
  /** A lock file without a readable pid older than this is stale (its writer died between create and write). */
  staleEmptyLockMs: number;
  isProcessAlive: (pid: number) => boolean;
  now: () => number;
}

/**
 * True unless the OS says no such process exists (EPERM means it exists but is not ours) or,
 * on Linux, the process is a zombie: killed but not yet reaped by its parent, it still answers
 * `kill(pid, 0)` but will never release a lock.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return errorCode(error) !== "ESRCH";
  }
  return processState(pid) !== "Z";
}

/** The state letter of `/proc/<pid>/stat` (Linux), or undefined where there is no procfs. */
export function processState(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // "<pid> (<comm>) <state> …": comm may itself hold ") ", so look after the last one.
  const close = stat.lastIndexOf(")");
  return close === -1 ? undefined : stat.charAt(close + 2);
}

interface Holder {
  pid: number | undefined;
  ino: number;
  mtimeMs: number;
}

function readHolder(fs: SyncFs, lockPath: string): Holder | null {
  let fd: number;
  try {
    fd = fs.openSync(lockPath, "r");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    throw error;
  }
  try {
    const stat = fs.fstatSync(fd);
    const buffer = Buffer.alloc(32);
    const n = fs.readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.toString("utf8", 0, n);
    const pid = /^\d+\n/.test(text) ? Number.parseInt(text, 10) : undefined;
    return { pid, ino: stat.ino, mtimeMs: stat.mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

/** Creates `lockPath` exclusively (O_EXCL) holding `pid`; false if it already exists. */
function tryCreate(fs: SyncFs, lockPath: string, pid: number): boolean {
  let fd: number;
  try {
    fd = fs.openSync(lockPath, "wx");
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw error;
  }
  try {
    fs.writeSync(fd, `${pid}\n`);
  } catch (error) {
    fs.closeSync(fd);
    fs.unlinkSync(lockPath);
    throw error;
  }
  fs.closeSync(fd);
  return true;
}

function isStale(holder: Holder, policy: LockPolicy): boolean {
  if (holder.pid === undefined) return policy.now() - holder.mtimeMs > policy.staleEmptyLockMs;
  return !policy.isProcessAlive(holder.pid);
}

function unlinkQuietly(fs: SyncFs, path: string): void {
  try {
    fs.unlinkSync(path);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
}

/**
 * Removes a stale lock. Two processes may judge the same lock stale at once; the `.break`
 * side lock makes only one of them remove it, and the re-read under it makes sure the file
 * removed is the dead one observed and not a fresh lock someone created in between.
 */
function breakStale(lockPath: string, observed: Holder, policy: LockPolicy): boolean {
  const breaker = `${lockPath}.break`;
  if (!tryCreate(policy.fs, breaker, policy.pid)) {
    const other = readHolder(policy.fs, breaker);
    if (other !== null && isStale(other, policy)) unlinkQuietly(policy.fs, breaker);
    // Someone else is breaking it: give them a moment.
    return false;
  }
  try {
    const current = readHolder(policy.fs, lockPath);
    if (current !== null && current.ino === observed.ino && current.pid === observed.pid) {
      unlinkQuietly(policy.fs, lockPath);
    }
  } finally {
    unlinkQuietly(policy.fs, breaker);
  }
  return true;
}

/** How long a free lock is left to a waiting rival before its request is considered abandoned. */
const RIVAL_GRACE_MS = 200;

/** `<lock>.want`: a waiting process asks the holder to hand the lock over (fairness). */
export function wantPath(lockPath: string): string {
  return `${lockPath}.want`;
}

/** Another live process's hand-over request; a dead process's request is removed. */
function liveRival(want: string, policy: LockPolicy): Holder | null {
  // A stat first: the common case is no request, and a failed open would throw.
  if (policy.fs.statSync(want, { throwIfNoEntry: false }) === undefined) return null;
  const rival = readHolder(policy.fs, want);
  if (rival === null || rival.pid === policy.pid) return null;
  if (!isStale(rival, policy)) return rival;
  unlinkQuietly(policy.fs, want);
  return null;
}

/** Creates the lock if it is free right now, with no waiting: the uncontended fast path. */
export function tryAcquireFileLock(
  lockPath: string,
  policy: LockPolicy,
  what: { segmentId: string },
): boolean {
  if (liveRival(wantPath(lockPath), policy) !== null) return false;
  try {
    return tryCreate(policy.fs, lockPath, policy.pid);
  } catch (error) {
    if (errorCode(error) === "ENOENT") {
      throw new NotFoundError({ what: "segment", id: what.segmentId, where: lockPath });
    }
    throw error;
  }
}

/**
 * Takes the cross-process append lock `lockPath` (a file holding the owner's pid, created with
 * O_EXCL). A lock of a dead (or zombie) process is taken over. A live holder is waited for with
 * short timer polls, never blocking the event loop, up to `timeoutMs`, then `LockTimeoutError`;
 * `signal` aborts the wait with its reason. While waiting, this process leaves a `.want` file
 * so a holder that keeps appending hands the lock over instead of starving it, and newcomers
 * let the process that asked first go first. `onWait` runs before each pause (the caller drops
 * its idle leases there, so two processes never wait on each other's leases).
 * `what` names the segment for a missing-directory error.
 */
export async function acquireFileLock(
  lockPath: string,
  policy: LockPolicy,
  what: { segmentId: string },
  hooks: { signal?: AbortSignal; onWait?: () => void } = {},
): Promise<void> {
  const want = wantPath(lockPath);
  const started = policy.now();
  let delay = 1;
  let wanting = false;
  let freeForRivalSince: number | undefined;
  try {
    for (;;) {
      hooks.signal?.throwIfAborted();
      let rival = wanting ? null : liveRival(want, policy);
      if (rival !== null && !policy.fs.statSync(lockPath, { throwIfNoEntry: false })) {
        // A real waiter grabs a free lock within a poll; a request left by a process whose pid
        // now belongs to someone else never would. Stop yielding to it after a grace period.
        freeForRivalSince ??= policy.now();
        if (policy.now() - freeForRivalSince > RIVAL_GRACE_MS) {
          unlinkQuietly(policy.fs, want);
          rival = null;
        }
      } else {
        freeForRivalSince = undefined;
      }
      if (rival === null) {
        try {
          if (tryCreate(policy.fs, lockPath, policy.pid)) return;
        } catch (error) {
          if (errorCode(error) === "ENOENT") {
            throw new NotFoundError({ what: "segment", id: what.segmentId, where: lockPath });
          }
          throw error;
        }
      }
      const holder = readHolder(policy.fs, lockPath);
      if (holder !== null && isStale(holder, policy)) {
        if (breakStale(lockPath, holder, policy)) continue;
      } else if (holder === null && rival === null) {
        continue;
      }
      // On every poll, not just the first: a lease taken meanwhile by another operation of
      // this process must not be held while it waits either.
      hooks.onWait?.();
      if (holder !== null && rival === null && !wanting) wanting = tryCreate(policy.fs, want, policy.pid);
      const waited = policy.now() - started;
      if (waited >= policy.timeoutMs) {
        const pid = holder?.pid ?? rival?.pid;
        throw new LockTimeoutError({ lockFile: lockPath, holderPid: pid, waitedMs: Math.round(waited) });
      }
      try {
        await sleep(Math.min(delay, policy.timeoutMs - waited), undefined, { signal: hooks.signal });
      } catch (error) {
        hooks.signal?.throwIfAborted(); // the caller's reason, not the timer's AbortError
        throw error;
      }
      delay = Math.min(delay * 2, 5);
    }
  } finally {
    if (wanting) unlinkQuietly(policy.fs, want);
  }
}

/** True when some process waits for `lockPath` (one stat; the holder checks this while it holds). */
export function isLockWanted(fs: SyncFs, lockPath: string): boolean {
  return fs.statSync(wantPath(lockPath), { throwIfNoEntry: false }) !== undefined;
}

/** Removes a lock file this process created. */
export function releaseFileLock(fs: SyncFs, lockPath: string): void {
  unlinkQuietly(fs, lockPath);
}
