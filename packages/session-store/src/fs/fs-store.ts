import { join } from "node:path";
import type { z } from "zod";
import { createEntryCodec, type EntryCodec } from "../entry/entry-codec.js";
import {
  type Entry,
  FORMAT_VERSION,
  type FormatVersion,
  type MinimalItem,
  MinimalItemSchema,
} from "../entry/entry-schema.js";
import { CRC_TAIL_LENGTH, frameLine, frameLines, hasFrameTail } from "../entry/line-frame.js";
import { NotFoundError, SessionStoreUsageError } from "../errors.js";
import { assertSafeId } from "../ids.js";
import type {
  AppendOutcome,
  SegmentRef,
  SegmentSummary,
  Store,
  TruncateOutcome,
  WriteOptions,
} from "../store/store.js";
import { listDir } from "./list-dir.js";
import { holdLock, releaseLock, releaseLocksOf } from "./lock-registry.js";
import { type ReadSummary, readSegmentBatches, readSegmentEnds, readSegmentFile } from "./read-segment.js";
import { isProcessAlive, type LockPolicy } from "./segment-lock.js";
import { scanLines } from "./segment-scan.js";
import { appendOnce, type OpenSegment, writeWholeFile } from "./segment-write.js";
import { defaultSyncFs, errorCode, type SyncFs } from "./sync-fs.js";

/** Options of `FsStore`. */
export interface FsStoreOptions<TItem> {
  /** Directory holding `<session>/<segment>.jsonl`; see `sessionsRoot(workspace)`. */
  root: string;
  /** Schema of history items; default: any JSON object with a string `type`. */
  itemSchema?: z.ZodType<TItem>;
  /** `"fsync"` flushes every append and whole-file write to disk; default `"none"`. */
  durability?: "none" | "fsync";
  /** Bound on waiting for a segment lock held by a live process (default 10 000 ms). */
  lockTimeoutMs?: number;
  /**
   * How long this process keeps a segment's lock after its last append (default 10 ms), so a
   * burst of appends pays for one lock; 0 releases it at the end of the current tick. Another
   * process appending to the same segment waits at most this long after the burst.
   */
  lockLingerMs?: number;
  /** Age after which a lock file without a pid counts as stale (default 2 000 ms). */
  staleEmptyLockMs?: number;
  /** Injection points: file operations, pid, liveness check, clock. */
  fs?: SyncFs;
  pid?: number;
  isProcessAlive?: (pid: number) => boolean;
  now?: () => number;
}

/** `<workspace>/.podkit/sessions`, the default root of a workspace's sessions. */
export function sessionsRoot(workspace: string): string {
  return join(workspace, ".podkit", "sessions");
}

const MAX_OPEN_SEGMENTS = 16;

interface ReadHint {
  ino: number;
  committedSize: number;
  count: number;
  version: FormatVersion | undefined;
}

/**
 * The embedded default store: one JSONL file per segment at `<root>/<session>/<segment>.jsonl`.
 * Format v2 lines carry their sequence number and a CRC-32 of their bytes (`line-frame.ts`);
 * a v1 segment is read as it is and appended to in v1.
 *
 * Durability: the newline is the commit marker; before appending, a torn tail is cut
 * back to the last newline; each append is one positional write of record(s) plus newline, and
 * a failed write is rolled back to the previous length. Appends are serialized across processes
 * by `<segment>.jsonl.lock` (pid inside, O_EXCL), held as a short lease: kept while appends keep
 * coming and released `lockLingerMs` after the last one, so a burst pays for one lock file and
 * another process waits at most that long. While the lease is held, a 1-byte read past the
 * committed end is the only check an append needs. Create and truncate write a temp file and
 * rename it into place.
 */
export class FsStore<TItem = MinimalItem> implements Store<TItem> {
  readonly root: string;
  private readonly codec: EntryCodec<TItem>;
  private readonly fs: SyncFs;
  private readonly fsync: boolean;
  private readonly lockPolicy: LockPolicy & { lingerMs: number };
  private readonly open = new Map<string, OpenSegment>();
  private readonly hints = new Map<string, ReadHint>();
  private readonly probe = Buffer.alloc(1);
  /** Paths of frozen refs (a writer passes the same frozen ref on every append). */
  private readonly paths = new WeakMap<SegmentRef, string>();
  /** Lock path of each segment path: a string built per append cost a hash of it on every lookup. */
  private readonly lockPaths = new Map<string, string>();

  constructor(options: FsStoreOptions<TItem>) {
    this.root = options.root;
    this.codec = createEntryCodec(options.itemSchema ?? (MinimalItemSchema as unknown as z.ZodType<TItem>));
    this.fs = options.fs ?? defaultSyncFs;
    this.fsync = options.durability === "fsync";
    this.lockPolicy = {
      fs: this.fs,
      pid: options.pid ?? process.pid,
      timeoutMs: options.lockTimeoutMs ?? 10_000,
      staleEmptyLockMs: options.staleEmptyLockMs ?? 2_000,
      lingerMs: options.lockLingerMs ?? 10,
      isProcessAlive: options.isProcessAlive ?? isProcessAlive,
      now: options.now ?? Date.now,
    };
  }

  /** Absolute path of a segment file. */
  segmentPath(ref: SegmentRef): string {
    const known = this.paths.get(ref);
    if (known !== undefined) return known;
    assertSafeId(ref.sessionId, "session");
    assertSafeId(ref.segmentId, "segment");
    const path = join(this.root, ref.sessionId, `${ref.segmentId}.jsonl`);
    if (Object.isFrozen(ref)) this.paths.set(ref, path);
    return path;
  }

  async createSegment(ref: SegmentRef, entries: readonly Entry<TItem>[]): Promise<void> {
    const path = this.segmentPath(ref);
    const first = entries[0];
    if (first?.kind !== "segment_start") {
      throw new SessionStoreUsageError(`segment ${ref.segmentId} must begin with a segment_start entry`);
    }
    const version = first.v;
    const lines = entries.map((entry, seq) => this.line(this.codec.encode(entry), seq, version));
    const data = Buffer.from(`${lines.join("\n")}\n`, "utf8");
    this.fs.mkdirSync(join(this.root, ref.sessionId), { recursive: true });
    if (this.exists(path)) {
      throw new SessionStoreUsageError(
        `segment ${ref.segmentId} already exists at ${path}; segments are never replaced`,
      );
    }
    writeWholeFile(this.fs, path, [data], this.fsync);
  }

  append(ref: SegmentRef, entries: readonly Entry<TItem>[], options?: WriteOptions): Promise<AppendOutcome> {
    // Not an async function: with the lock held (the common case) the append completes
    // synchronously, and the promise wrapper is the only asynchronous part of it.
    try {
      const path = this.segmentPath(ref);
      // Validate and serialize before taking the lock; only the frame needs the position.
      const bodies = entries.map((entry) => this.codec.encode(entry));
      const locked = this.lockedSegment(ref, path, options?.signal);
      if (locked instanceof Promise) {
        return locked.then((segment) => this.appendLocked(segment, bodies, options?.expectedCount));
      }
      return Promise.resolve(this.appendLocked(locked, bodies, options?.expectedCount));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private appendLocked(segment: OpenSegment, bodies: string[], expected: number | undefined): AppendOutcome {
    if (expected !== undefined && expected !== segment.count) {
      // This writer will continue elsewhere: free the segment now, not after the linger (the
      // fork it writes next may take a while, and other writers may be waiting).
      releaseLock(this.lockPathOf(segment.path));
      return { status: "drift", count: segment.count };
    }
    if (bodies.length === 0) return { status: "appended", count: segment.count };
    const data =
      segment.version === 1
        ? Buffer.from(`${bodies.join("\n")}\n`, "utf8")
        : frameLines(bodies, segment.count);
    try {
      appendOnce(this.fs, segment, data, bodies.length, this.fsync);
    } catch (error) {
      this.forget(segment.path);
      throw error;
    }
    return { status: "appended", count: segment.count };
  }

  async entryCount(ref: SegmentRef, options?: { signal?: AbortSignal }): Promise<number> {
    const path = this.segmentPath(ref);
    const locked = this.lockedSegment(ref, path, options?.signal);
    return (locked instanceof Promise ? await locked : locked).count;
  }

  async truncate(ref: SegmentRef, keep: number, options?: WriteOptions): Promise<TruncateOutcome> {
    const path = this.segmentPath(ref);
    const locked = this.lockedSegment(ref, path, options?.signal);
    const segment = locked instanceof Promise ? await locked : locked;
    const expected = options?.expectedCount;
    if (expected !== undefined && expected !== segment.count) {
      releaseLock(this.lockPathOf(path));
      return { status: "drift", count: segment.count };
    }
    if (!Number.isInteger(keep) || keep < 1 || keep > segment.count) {
      throw new SessionStoreUsageError(
        `cannot truncate segment ${ref.segmentId} to ${keep} entries: it holds ${segment.count}; ` +
          "keep at least its segment_start (1) and at most every entry",
      );
    }
    if (keep === segment.count && segment.fileSize === segment.committedSize) {
      return { status: "truncated", count: keep };
    }
    const cut = scanLines(this.fs, segment.fd, {
      from: 0,
      to: segment.committedSize,
      startCount: 0,
      stopAtCount: keep,
    });
    const chunks: Buffer[] = [];
    const chunk = 1 << 20;
    for (let position = 0; position < cut.committedSize; position += chunk) {
      const buffer = Buffer.allocUnsafe(Math.min(chunk, cut.committedSize - position));
      this.fs.readSync(segment.fd, buffer, 0, buffer.length, position);
      chunks.push(buffer);
    }
    writeWholeFile(this.fs, path, chunks, this.fsync);
    this.forget(path);
    // Still under the lock taken above (no await since), so the reopened view is exact.
    const reopened = this.lockedSegment(ref, path, options?.signal);
    return { status: "truncated", count: (reopened instanceof Promise ? await reopened : reopened).count };
  }

  async describeSegment(ref: SegmentRef): Promise<SegmentSummary<TItem>> {
    const path = this.segmentPath(ref);
    let ends: Awaited<ReturnType<typeof readSegmentEnds<TItem>>>;
    try {
      ends = await readSegmentEnds(path, this.codec);
    } catch (error) {
      if (errorCode(error) === "ENOENT") {
        throw new NotFoundError({ what: "segment", id: ref.segmentId, where: path });
      }
      throw error;
    }
    if (ends === null || ends.first.kind !== "segment_start") {
      throw new SessionStoreUsageError(
        `${path} does not begin with a committed segment_start; it is not a segment`,
      );
    }
    return { start: ends.first, last: ends.last, entryCount: ends.count };
  }

  /** One line as stored: a v2 line is framed with its sequence number and checksum. */
  private line(body: string, seq: number, version: FormatVersion): string {
    return version === 1 ? body : frameLine(body, seq);
  }

  readAll(ref: SegmentRef): AsyncIterable<Entry<TItem>> {
    const path = this.segmentPath(ref);
    return this.readFile(path, ref, readSegmentFile);
  }

  readBatches(ref: SegmentRef): AsyncIterable<readonly Entry<TItem>[]> {
    const path = this.segmentPath(ref);
    return this.readFile(path, ref, readSegmentBatches);
  }

  private async *readFile<T>(
    path: string,
    ref: SegmentRef,
    read: (
      file: string,
      codec: EntryCodec<TItem>,
      onComplete: (summary: ReadSummary) => void,
    ) => AsyncGenerator<T>,
  ): AsyncGenerator<T> {
    try {
      yield* read(path, this.codec, (summary) => {
        if (this.open.has(path)) return;
        if (this.hints.size >= MAX_OPEN_SEGMENTS) this.hints.clear();
        this.hints.set(path, summary);
      });
    } catch (error) {
      if (errorCode(error) === "ENOENT") {
        throw new NotFoundError({ what: "segment", id: ref.segmentId, where: path });
      }
      throw error;
    }
  }

  async listSessions(): Promise<string[]> {
    return ((await listDir(this.root, true)) ?? []).sort().reverse();
  }

  async listSegments(sessionId: string): Promise<string[]> {
    assertSafeId(sessionId, "session");
    const dir = join(this.root, sessionId);
    const names = await listDir(dir, false);
    if (names === undefined) throw new NotFoundError({ what: "session", id: sessionId, where: this.root });
    return names.sort().reverse();
  }

  async lookupSessionOf(segmentId: string): Promise<string | undefined> {
    assertSafeId(segmentId, "segment");
    for (const sessionId of await this.listSessions()) {
      if (this.exists(join(this.root, sessionId, `${segmentId}.jsonl`))) return sessionId;
    }
    return undefined;
  }

  async close(): Promise<void> {
    releaseLocksOf(this);
    for (const path of [...this.open.keys()]) this.forget(path);
    this.hints.clear();
  }

  /**
   * Takes the segment's lock and returns the exact committed state of its file. While this
   * store has held the lock continuously only bytes past the committed end need checking;
   * otherwise the path is re-checked too: same inode → count the lines past the known committed
   * length (a torn tail is not a line); replaced (truncated by someone) or shrunk → full rescan.
   */
  private lockedSegment(
    ref: SegmentRef,
    path: string,
    signal?: AbortSignal,
  ): OpenSegment | Promise<OpenSegment> {
    const held = holdLock(this.lockPathOf(path), this, this.lockPolicy, ref, signal);
    if (typeof held === "boolean") return this.segmentView(ref, path, held);
    return held.then((continuous) => this.segmentView(ref, path, continuous));
  }

  private lockPathOf(path: string): string {
    let lockPath = this.lockPaths.get(path);
    if (lockPath === undefined) {
      if (this.lockPaths.size >= MAX_OPEN_SEGMENTS * 4) this.lockPaths.clear();
      lockPath = `${path}.lock`;
      this.lockPaths.set(path, lockPath);
    }
    return lockPath;
  }

  private segmentView(ref: SegmentRef, path: string, continuous: boolean): OpenSegment {
    const cached = this.open.get(path);
    if (continuous && cached !== undefined) {
      // No cooperating writer can have run, but a stray one (an editor, `echo >>`) might have:
      // a 1-byte read past the committed end (cheaper than fstat) keeps "cut the torn tail
      // before each append" literally true without trusting the lock alone.
      if (this.fs.readSync(cached.fd, this.probe, 0, 1, cached.committedSize) !== 0) {
        this.rescanTail(cached, this.fs.fstatSync(cached.fd).size);
      }
      return cached;
    }
    let stat: { ino: number; size: number };
    try {
      stat = this.fs.statSync(path);
    } catch (error) {
      if (errorCode(error) === "ENOENT") {
        throw new NotFoundError({ what: "segment", id: ref.segmentId, where: path });
      }
      throw error;
    }
    if (cached !== undefined && cached.ino === stat.ino && stat.size >= cached.committedSize) {
      // Committed bytes never change in place, so only what lies past them needs counting.
      if (stat.size !== cached.committedSize) this.rescanTail(cached, stat.size);
      else cached.fileSize = stat.size;
      return cached;
    }
    if (cached !== undefined) this.forget(path);
    const fd = this.fs.openSync(path, "r+");
    const { ino, size } = this.fs.fstatSync(fd);
    const hint = this.hints.get(path);
    this.hints.delete(path);
    const base = hint !== undefined && hint.ino === ino && size >= hint.committedSize ? hint : undefined;
    const scan = scanLines(this.fs, fd, {
      from: base?.committedSize ?? 0,
      to: size,
      startCount: base?.count ?? 0,
    });
    const segment: OpenSegment = {
      path,
      fd,
      ino,
      committedSize: scan.committedSize,
      count: scan.count,
      fileSize: size,
      version: base?.version ?? this.versionOf(fd, scan.committedSize),
    };
    // A long-lived writer moves on to new segments (compaction, forks); keep only recent files open.
    const oldest = this.open.keys().next();
    if (this.open.size >= MAX_OPEN_SEGMENTS && !oldest.done) this.forget(oldest.value);
    this.open.set(path, segment);
    return segment;
  }

  /** A segment's format, from the frame (or its absence) on its last committed line. */
  private versionOf(fd: number, committedSize: number): FormatVersion {
    const length = Math.min(committedSize - 1, CRC_TAIL_LENGTH + 1);
    if (length <= CRC_TAIL_LENGTH) return FORMAT_VERSION;
    const tail = Buffer.alloc(length);
    this.fs.readSync(fd, tail, 0, length, committedSize - 1 - length);
    return hasFrameTail(tail, 0, length) ? 2 : 1;
  }

  private rescanTail(segment: OpenSegment, size: number): void {
    const scan = scanLines(this.fs, segment.fd, {
      from: segment.committedSize,
      to: size,
      startCount: segment.count,
    });
    segment.committedSize = scan.committedSize;
    segment.count = scan.count;
    segment.fileSize = size;
  }

  private forget(path: string): void {
    const segment = this.open.get(path);
    if (segment === undefined) return;
    this.open.delete(path);
    try {
      this.fs.closeSync(segment.fd);
    } catch {
      // Already unusable; nothing else to release.
    }
  }

  private exists(path: string): boolean {
    try {
      this.fs.statSync(path);
      return true;
    } catch (error) {
      if (errorCode(error) === "ENOENT") return false;
      throw error;
    }
  }
}
