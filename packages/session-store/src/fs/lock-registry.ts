import { acquireFileLock, isLockWanted, type LockPolicy, releaseFileLock } from "./segment-lock.js";
import type { SyncFs } from "./sync-fs.js";

// The locks this thread holds. Module state on purpose: a lock file names a process, so which
// locks "we" hold is process-wide state like the fd table; two FsStore instances in one thread
// must share it or the second would wait forever for a lock its own thread holds.
interface HeldLock {
  owner: object;
  fs: SyncFs;
  lingerMs: number;
  lastUse: number;
  lastWantCheck: number;
}
/** How often a busy holder looks for a waiting process's hand-over request. */
const WANT_CHECK_MS = 2;
const held = new Map<string, HeldLock>();
let tickReleaseScheduled = false;
let lingerTimer: NodeJS.Timeout | undefined;
let exitHookInstalled = false;

function release(lockPath: string, lock: HeldLock): void {
  held.delete(lockPath);
  releaseFileLock(lock.fs, lockPath);
}

/** Releases every lock this thread holds (also runs on process exit). */
export function releaseHeldLocks(): void {
  for (const [lockPath, lock] of held) release(lockPath, lock);
}

/** Releases the locks `owner` holds now instead of when they expire. */
export function releaseLocksOf(owner: object): void {
  for (const [lockPath, lock] of held) if (lock.owner === owner) release(lockPath, lock);
}

function releaseAtTickEnd(): void {
  tickReleaseScheduled = false;
  for (const [lockPath, lock] of held) if (lock.lingerMs === 0) release(lockPath, lock);
}

function releaseIdle(): void {
  lingerTimer = undefined;
  const now = performance.now();
  let next = Number.POSITIVE_INFINITY;
  for (const [lockPath, lock] of held) {
    if (lock.lingerMs === 0) continue;
    const due = lock.lastUse + lock.lingerMs;
    if (due <= now) release(lockPath, lock);
    else next = Math.min(next, due);
  }
  if (next !== Number.POSITIVE_INFINITY) armLingerTimer(next - now);
}

function armLingerTimer(ms: number): void {
  if (lingerTimer !== undefined) return;
  lingerTimer = setTimeout(releaseIdle, Math.max(1, Math.ceil(ms)));
  lingerTimer.unref();
}

/**
 * Makes sure this thread holds the append lock `lockPath` for `owner`. The lock is a lease: it
 * is kept until the end of the current tick (`lingerMs` 0) or until no append used it for
 * `lingerMs`, and released on process exit; a killed holder leaves a lock of a dead pid that
 * the next writer takes over. A holder that keeps appending checks every few ms whether another
 * process waits (its `.want` file) and then hands the lock over and queues behind it. Returns true when `owner` held it continuously since its
 * previous call — nobody else can have touched the segment, so `owner`'s cached view of the
 * file is exact; false when the lock was (re)taken and the file must be re-checked.
 */
export function holdLock(
  lockPath: string,
  owner: object,
  policy: LockPolicy & { lingerMs: number },
  what: { segmentId: string },
): boolean {
  const current = held.get(lockPath);
  if (current !== undefined) {
    const now = performance.now();
    current.lastUse = now;
    const due = now - current.lastWantCheck >= WANT_CHECK_MS;
    if (due) current.lastWantCheck = now;
    if (!due || !isLockWanted(current.fs, lockPath)) {
      if (current.owner === owner) return true;
      current.owner = owner;
      return false;
    }
    // Another process is waiting: hand the lock over and queue behind it.
    release(lockPath, current);
  }
  acquireFileLock(lockPath, policy, what);
  const now = performance.now();
  held.set(lockPath, { owner, fs: policy.fs, lingerMs: policy.lingerMs, lastUse: now, lastWantCheck: now });
  if (policy.lingerMs === 0) {
    if (!tickReleaseScheduled) {
      tickReleaseScheduled = true;
      setImmediate(releaseAtTickEnd);
    }
  } else {
    armLingerTimer(policy.lingerMs);
  }
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", releaseHeldLocks);
  }
  return false;
}
