import {
  acquireFileLock,
  isLockWanted,
  type LockPolicy,
  releaseFileLock,
  tryAcquireFileLock,
} from "./segment-lock.js";
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
  /** Set while an operation holds the lease across awaits (see `pinLease`); settles when it ends. */
  pinned?: Promise<void>;
  /** Set when the lock is given up: a holder that kept this object (`heldLease`) must look again. */
  released?: true;
}

/** A lease this thread holds, as `heldLease` hands it out for `renewHeldLease`. */
export type HeldLease = Readonly<Pick<HeldLock, "owner">>;
/** How often a busy holder looks for a waiting process's hand-over request. */
const WANT_CHECK_MS = 2;
const held = new Map<string, HeldLock>();
/** Acquisitions in progress: later callers in this thread queue on the same wait. */
const acquiring = new Map<string, Promise<void>>();
let tickReleaseScheduled = false;
let lingerTimer: NodeJS.Timeout | undefined;
let exitHookInstalled = false;

function release(lockPath: string, lock: HeldLock): void {
  lock.released = true;
  held.delete(lockPath);
  releaseFileLock(lock.fs, lockPath);
}

/** Releases every lock this thread holds that no operation is using (also runs on process exit). */
export function releaseHeldLocks(): void {
  for (const [lockPath, lock] of held) if (lock.pinned === undefined) release(lockPath, lock);
}

/** Releases every lock this thread holds, pinned or not: the process is going away. */
function releaseAllOnExit(): void {
  for (const [lockPath, lock] of held) release(lockPath, lock);
}

/** Releases the locks `owner` holds now instead of when they expire (pinned ones when they end). */
export function releaseLocksOf(owner: object): void {
  for (const [lockPath, lock] of held) {
    if (lock.owner !== owner) continue;
    if (lock.pinned === undefined) release(lockPath, lock);
    else lock.lingerMs = 0;
  }
}

/** Releases `lockPath` now if this thread holds it (e.g. a segment its writer just left). */
export function releaseLock(lockPath: string): void {
  const lock = held.get(lockPath);
  if (lock !== undefined) release(lockPath, lock);
}

function releaseAtTickEnd(): void {
  tickReleaseScheduled = false;
  for (const [lockPath, lock] of held)
    if (lock.lingerMs === 0 && lock.pinned === undefined) release(lockPath, lock);
}

function releaseIdle(): void {
  lingerTimer = undefined;
  const now = performance.now();
  let next = Number.POSITIVE_INFINITY;
  for (const [lockPath, lock] of held) {
    if (lock.lingerMs === 0 || lock.pinned !== undefined) continue;
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

function scheduleRelease(lingerMs: number): void {
  if (lingerMs === 0) {
    if (!tickReleaseScheduled) {
      tickReleaseScheduled = true;
      setImmediate(releaseAtTickEnd);
    }
  } else {
    armLingerTimer(lingerMs);
  }
}

function register(lockPath: string, owner: object, policy: LockPolicy & { lingerMs: number }): void {
  const now = performance.now();
  held.set(lockPath, { owner, fs: policy.fs, lingerMs: policy.lingerMs, lastUse: now, lastWantCheck: now });
  scheduleRelease(policy.lingerMs);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", releaseAllOnExit);
  }
}

/**
 * Keeps the lease on `lockPath` (which this thread must hold) until the returned function is
 * called, for an operation that awaits while it needs the segment to itself (a truncation
 * rewriting the file): no linger, no hand-over to a waiting process and no `releaseHeldLocks`
 * gives it up meanwhile, and another operation of this thread waits for it to end.
 */
export function pinLease(lockPath: string): () => void {
  const lock = held.get(lockPath);
  if (lock === undefined) throw new Error(`pinLease: ${lockPath} is not held by this thread`);
  let unpin: () => void = () => {};
  lock.pinned = new Promise<void>((resolve) => {
    unpin = resolve;
  });
  return () => {
    lock.pinned = undefined;
    lock.lastUse = performance.now();
    unpin();
    scheduleRelease(lock.lingerMs);
  };
}

/** Settles when `signal` aborts (never without one). */
function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
}

/** Takes `lockPath` for `owner` once the wait in progress (if any) and this thread's turn are over. */
async function acquire(
  lockPath: string,
  owner: object,
  policy: LockPolicy & { lingerMs: number },
  what: { segmentId: string },
  signal: AbortSignal | undefined,
): Promise<false> {
  for (;;) {
    const pinned = held.get(lockPath)?.pinned;
    if (pinned !== undefined) {
      // Another operation of this thread has the segment to itself for a moment: wait for it.
      await Promise.race([pinned, aborted(signal)]);
      signal?.throwIfAborted();
      continue;
    }
    const current = held.get(lockPath);
    if (current !== undefined) {
      current.owner = owner;
      current.lastUse = performance.now();
      return false;
    }
    const pending = acquiring.get(lockPath);
    if (pending === undefined) break;
    // Another operation of this thread is already waiting for this lock: queue behind it.
    await Promise.race([pending.catch(() => {}), aborted(signal)]);
    signal?.throwIfAborted();
  }
  const wait = acquireFileLock(lockPath, policy, what, {
    signal,
    // Every lease this thread holds is idle while it waits (only a pinned operation holds a lock
    // across an await, and it never waits for another lock), so give them up: two processes must
    // never wait on each other's leases. (This wait's own lock is not among them: not held yet.)
    onWait: releaseHeldLocks,
  });
  acquiring.set(lockPath, wait);
  try {
    await wait;
  } finally {
    acquiring.delete(lockPath);
  }
  register(lockPath, owner, policy);
  return false;
}

/**
 * Acquires the append lock `lockPath` for `owner`, or renews the lease this thread already
 * holds on it. The lock is a lease: it
 * is kept until the end of the current tick (`lingerMs` 0) or until no append used it for
 * `lingerMs`, and released on process exit; a killed holder leaves a lock of a dead pid that
 * the next writer takes over. A holder that keeps appending checks every few ms whether another
 * process waits (its `.want` file) and then hands the lock over and queues behind it.
 *
 * Returns true when `owner` held it continuously since its previous call — nobody else can have
 * touched the segment, so `owner`'s cached view of the file is exact; false when the lock was
 * (re)taken and the file must be re-checked. Synchronous (a plain boolean) when the lock is held
 * or free; a promise only when it has to wait, and the wait never blocks the event loop.
 */
export function acquireOrRenewLease(
  lockPath: string,
  owner: object,
  policy: LockPolicy & { lingerMs: number },
  what: { segmentId: string },
  signal?: AbortSignal,
): boolean | Promise<boolean> {
  const current = held.get(lockPath);
  if (current?.pinned !== undefined) return acquire(lockPath, owner, policy, what, signal);
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
  } else if (!acquiring.has(lockPath) && tryAcquireFileLock(lockPath, policy, what)) {
    register(lockPath, owner, policy);
    return false;
  }
  return acquire(lockPath, owner, policy, what, signal);
}

/** The lease this thread holds on `lockPath`, to renew with `renewHeldLease` without looking it up. */
export function heldLease(lockPath: string): HeldLease | undefined {
  return held.get(lockPath);
}

/**
 * `acquireOrRenewLease`'s answer for a lease `owner` holds and used last, when it can be given
 * without a look-up: true when the lease is still held by `owner`, unpinned, and no check for a
 * waiting process is due (the lease is renewed); false when the caller must take the full path.
 */
export function renewHeldLease(lease: HeldLease, owner: object): boolean {
  const lock = lease as HeldLock;
  if (lock.released === true || lock.pinned !== undefined || lock.owner !== owner) return false;
  const now = performance.now();
  if (now - lock.lastWantCheck >= WANT_CHECK_MS) return false;
  lock.lastUse = now;
  return true;
}
