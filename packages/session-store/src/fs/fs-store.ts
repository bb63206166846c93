import { join } from "node:path";
import type { BlobStore } from "../blobs/blob-store.js";
import { createEntryCodec, type EntryCodec } from "../entry/entry-codec.js";
import type { Entry, EntrySchemas, MinimalItem } from "../entry/entry-schema.js";
import {
  FrameBuffer,
  frameInto,
  frameLine,
  frameParts,
  type LineFormat,
  lineFormatOf,
} from "../entry/line-frame.js";
import { timeSlicer } from "../entry/time-slice.js";
import { CorruptEntryError, NotFoundError, SessionStoreUsageError } from "../errors.js";
import { assertSafeId } from "../ids.js";
import {
  type AppendOutcome,
  type AppendsNow,
  appendNow,
  assertReadFrom,
  markAppendNow,
  type ReadOptions,
  type SegmentRef,
  type SegmentSummary,
  type Store,
  type TruncateOutcome,
  type WriteOptions,
} from "../store/store.js";
import { ChildIndex, type SessionOrigin } from "./child-index.js";
import { FsBlobStore } from "./fs-blob-store.js";
import { listSegmentFiles, listSessionDirs } from "./list-dir.js";
import {
  acquireOrRenewLease,
  type HeldLease,
  heldLease,
  pinLease,
  releaseLock,
  releaseLocksOf,
  renewHeldLease,
} from "./lock-registry.js";
import { OpenSegments } from "./open-segments.js";
import { readSegmentEnds, readSegmentFrom } from "./read-segment.js";
import { isProcessAlive, type LockPolicy } from "./segment-lock.js";
import { type ReadStart, SegmentPositions } from "./segment-positions.js";
import { scanLines } from "./segment-scan.js";
import { appendOnce, createFileExclusive, type OpenSegment, rewritePrefix } from "./segment-write.js";
import { defaultSyncFs, errorCode, type SyncFs } from "./sync-fs.js";

/** Options of `FsStore`. */
export interface FsStoreOptions<TItem> extends EntrySchemas<TItem> {
  /** Directory holding `<session>/<segment>.jsonl` and the blobs (`.blobs/`); see `sessionsRoot(workspace)`. */
  root: string;
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
  /** Injection points for tests: file operations, pid, liveness check, clock. */
  fs?: SyncFs;
  pid?: number;
  isProcessAlive?: (pid: number) => boolean;
  now?: () => number;
}

/** `<workspace>/.podkit/sessions`, the default root of a workspace's sessions. */
export function sessionsRoot(workspace: string): string {
  return join(workspace, ".podkit", "sessions");
}

const MAX_LOCK_PATHS = 64;
const SCAN_CHUNK = 1 << 20;

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
 * committed end is the only check an append needs. Create writes a temp file and links it into
 * place (never over an existing segment); truncate writes a temp file and renames it over.
 */
export class FsStore<TItem = MinimalItem> implements Store<TItem>, AppendsNow<TItem> {
  readonly root: string;
  private readonly codec: EntryCodec<TItem>;
  private readonly fs: SyncFs;
  private readonly fsync: boolean;
  private readonly lockPolicy: LockPolicy & { lingerMs: number };
  private readonly positions = new SegmentPositions();
  private readonly segments: OpenSegments;
  private readonly frame = new FrameBuffer();
  /** Paths of frozen refs (a writer passes the same frozen ref on every append). */
  private readonly paths = new WeakMap<SegmentRef, string>();
  /** Lock path of each segment path: a string built per append cost a hash of it on every lookup. */
  private readonly lockPaths = new Map<string, string>();
  /**
   * The segment the last append wrote to and the lease it held: the next append to the same
   * (frozen) ref renews that lease and probes that file without looking either up again.
   */
  private last: { ref: SegmentRef; segment: OpenSegment; lease: HeldLease } | undefined;
  private readonly children: ChildIndex;
  /** Content-addressed blobs, in `<root>/.blobs/sha256/<2 hex>/<62 hex>` (`FsBlobStore`). */
  readonly blobs: BlobStore;

  constructor(options: FsStoreOptions<TItem>) {
    this.root = options.root;
    this.codec = createEntryCodec(options);
    this.fs = options.fs ?? defaultSyncFs;
    this.fsync = options.durability === "fsync";
    this.segments = new OpenSegments(this.fs, this.positions);
    this.lockPolicy = {
      fs: this.fs,
      pid: options.pid ?? process.pid,
      timeoutMs: options.lockTimeoutMs ?? 10_000,
      staleEmptyLockMs: options.staleEmptyLockMs ?? 2_000,
      lingerMs: options.lockLingerMs ?? 10,
      isProcessAlive: options.isProcessAlive ?? isProcessAlive,
      now: options.now ?? Date.now,
    };
    this.children = new ChildIndex(this.root, this.fs, (sessionId) => this.originOf(sessionId));
    this.blobs = new FsBlobStore({ root: this.root, fsync: this.fsync, pid: this.lockPolicy.pid });
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
    const version = lineFormatOf(first.v);
    const pause = timeSlicer();
    // Serialize (and validate) everything before touching the file system.
    const encoded: string[][] = [];
    // A fork carries the usage entries of the whole session: thousands of them, in slices too.
    for (const entry of entries) {
      encoded.push(await this.codec.encodeSliced(entry, pause));
      await pause();
    }
    // The child is indexed under its parent before its segment exists (see ChildIndex).
    if (first.parent !== undefined) this.children.record(first.parent.session_id, ref.sessionId);
    this.fs.mkdirSync(join(this.root, ref.sessionId), { recursive: true });
    const file = await createFileExclusive(
      path,
      lines(encoded, version),
      { fs: this.fs, fsync: this.fsync, pause },
      ref,
    );
    // Its end is a known line position: the writer that continues here need not count the lines.
    this.positions.record(path, file.ino, version, entries.length, file.size);
  }

  append(ref: SegmentRef, entries: readonly Entry<TItem>[], options?: WriteOptions): Promise<AppendOutcome> {
    try {
      const outcome = this[appendNow](ref, entries, options?.expectedCount, options?.signal);
      return outcome instanceof Promise ? outcome : Promise.resolve(outcome);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * `append` without the promise when the lock is held or free (the common case): the write is
   * one small synchronous call, and only waiting for another process's lock is asynchronous.
   */
  [appendNow](
    ref: SegmentRef,
    entries: readonly Entry<TItem>[],
    expectedCount: number | undefined,
    signal: AbortSignal | undefined,
  ): AppendOutcome | Promise<AppendOutcome> {
    // Validate and serialize before taking the lock; only the frame needs the position.
    const bodies: string[] = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) bodies[i] = this.codec.encode(entries[i] as Entry<TItem>);
    const last = this.last;
    if (last !== undefined && last.ref === ref && !last.segment.closed && renewHeldLease(last.lease, this)) {
      return this.appendLocked(this.segments.checkTail(last.segment), bodies, expectedCount);
    }
    const path = this.segmentPath(ref);
    const locked = this.lockedSegment(ref, path, signal);
    if (locked instanceof Promise) {
      return locked.then((segment) => this.appendLocked(this.remember(ref, segment), bodies, expectedCount));
    }
    return this.appendLocked(this.remember(ref, locked), bodies, expectedCount);
  }

  /** Keeps `segment` and its lease as the last appended to (only for a frozen ref: it is the key). */
  private remember(ref: SegmentRef, segment: OpenSegment): OpenSegment {
    const lease = heldLease(this.lockPathOf(segment.path));
    this.last = lease !== undefined && Object.isFrozen(ref) ? { ref, segment, lease } : undefined;
    return segment;
  }

  private appendLocked(segment: OpenSegment, bodies: string[], expected: number | undefined): AppendOutcome {
    if (expected !== undefined && expected !== segment.count) {
      // This writer will continue elsewhere: free the segment now, not after the linger (the
      // fork it writes next may take a while, and other writers may be waiting).
      releaseLock(this.lockPathOf(segment.path));
      return { status: "drift", count: segment.count };
    }
    if (bodies.length === 0) return { status: "appended", count: segment.count };
    let data: Buffer;
    let length: number;
    if (segment.version === 1) {
      data = Buffer.from(`${bodies.join("\n")}\n`, "utf8");
      length = data.length;
    } else {
      length = frameInto(this.frame, bodies, segment.count);
      data = this.frame.bytes;
    }
    try {
      appendOnce(this.fs, segment, data, length, bodies.length, this.fsync);
    } catch (error) {
      this.segments.forget(segment.path);
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
    const lockPath = this.lockPathOf(path);
    const locked = this.lockedSegment(ref, path, options?.signal);
    const segment = locked instanceof Promise ? await locked : locked;
    const expected = options?.expectedCount;
    if (expected !== undefined && expected !== segment.count) {
      releaseLock(lockPath);
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
    // The rewrite awaits between chunks: the lease stays ours throughout (pinned), so neither
    // another process nor another operation of this one can touch the segment meanwhile.
    const unpin = pinLease(lockPath);
    const version = segment.version;
    try {
      const pause = timeSlicer();
      const cut = await this.lineOffset(segment, keep, pause);
      const file = await rewritePrefix(path, segment.fd, cut, { fs: this.fs, fsync: this.fsync, pause });
      this.positions.drop(path);
      // The new file's end is a known line position: reopening it counts nothing.
      this.positions.record(path, file.ino, version, keep, file.size);
    } catch (error) {
      this.positions.drop(path);
      throw error;
    } finally {
      this.segments.forget(path);
      unpin();
    }
    // Still under the lock (the pin ended just now, with nothing run since), so the view is exact.
    const reopened = this.lockedSegment(ref, path, options?.signal);
    return { status: "truncated", count: (reopened instanceof Promise ? await reopened : reopened).count };
  }

  /** Byte offset where line `index` (0-based) of an open segment starts, counted in slices. */
  private async lineOffset(segment: OpenSegment, index: number, pause: () => Promise<void> | undefined) {
    const start = this.readStart(segment.path, segment.ino, segment.committedSize, index, false);
    let scan = { count: start.index, committedSize: start.offset };
    while (scan.count < index) {
      const to = Math.min(segment.committedSize, scan.committedSize + SCAN_CHUNK);
      const next = scanLines(this.fs, segment.fd, {
        from: scan.committedSize,
        to,
        startCount: scan.count,
        stopAtCount: index,
      });
      // A chunk without a newline (part of a long line) moves on by the chunk, not the line.
      scan = next.count === scan.count ? { count: scan.count, committedSize: to } : next;
      await pause();
    }
    return scan.committedSize;
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

  async *readAll(ref: SegmentRef): AsyncIterable<Entry<TItem>> {
    for await (const batch of this.readFrom(ref, 0)) yield* batch;
  }

  async *readFrom(
    ref: SegmentRef,
    from: number,
    options?: ReadOptions,
  ): AsyncIterable<readonly Entry<TItem>[]> {
    assertReadFrom(from);
    const path = this.segmentPath(ref);
    let fromMark = false;
    let yielded = false;
    const read = () =>
      readSegmentFrom(path, this.codec, {
        from,
        ...(options?.signal === undefined ? {} : { signal: options.signal }),
        startAt: (ino, size) => {
          const start = this.readStart(path, ino, size, from, true);
          fromMark = start.index > 0;
          return start;
        },
        onPosition: (ino, version, position) =>
          this.positions.record(path, ino, version, position.index, position.offset),
      });
    try {
      try {
        for await (const batch of read()) {
          yielded = true;
          yield batch;
        }
      } catch (error) {
        // A remembered position that no longer holds (a replaced file that reused the inode)
        // shows as a wrong sequence number on the first line decoded there: read from the top.
        if (!(fromMark && !yielded && CorruptEntryError.isInstance(error))) throw error;
        this.positions.drop(path);
        for await (const batch of read()) yield batch;
      }
    } catch (error) {
      if (errorCode(error) === "ENOENT") {
        throw new NotFoundError({ what: "segment", id: ref.segmentId, where: path });
      }
      throw error;
    }
  }

  /** The nearest known line start at or before `index`: a remembered position or this writer's end. */
  private readStart(path: string, ino: number, size: number, index: number, forReading: boolean): ReadStart {
    const start = this.positions.start(path, ino, size, index, forReading);
    const open = this.segments.endOf(path);
    if (
      open !== undefined &&
      open.ino === ino &&
      open.count <= index &&
      open.count > start.index &&
      open.committedSize <= size &&
      (!forReading || open.version === 2)
    ) {
      return { index: open.count, offset: open.committedSize, version: open.version };
    }
    return start;
  }

  async listSessions(): Promise<string[]> {
    return ((await listSessionDirs(this.root)) ?? []).sort().reverse();
  }

  async listSegments(sessionId: string): Promise<string[]> {
    assertSafeId(sessionId, "session");
    const dir = join(this.root, sessionId);
    const names = listSegmentFiles(dir);
    if (names === undefined) throw new NotFoundError({ what: "session", id: sessionId, where: this.root });
    return names.sort().reverse();
  }

  /**
   * Removes session `sessionId`'s directory when it holds no segment at all — debris a crash
   * between creating it and the first write leaves (`podkit session doctor --fix`). A directory
   * with any segment file is never touched; returns whether one was removed.
   */
  async removeSessionDebris(sessionId: string): Promise<boolean> {
    assertSafeId(sessionId, "session");
    const dir = join(this.root, sessionId);
    const segments = listSegmentFiles(dir);
    if (segments === undefined || segments.length > 0) return false;
    const { lstat, readdir, rm } = await import("node:fs/promises");
    if ((await lstat(dir)).isSymbolicLink()) return false;
    // Only what the store itself leaves beside segments: lock files and the child index's markers.
    for (const name of await readdir(dir)) {
      if (!name.endsWith(".lock") && !name.startsWith(".child-")) return false;
    }
    await rm(dir, { recursive: true, force: true });
    return true;
  }

  async listChildSessions(parentSessionId: string): Promise<string[]> {
    return this.children.list(parentSessionId);
  }

  /** A session's oldest segment start (format version, parent), for the child index; undefined when unreadable. */
  private async originOf(sessionId: string): Promise<SessionOrigin | undefined> {
    try {
      const segmentId = (await this.listSegments(sessionId)).at(-1);
      if (segmentId === undefined) return undefined;
      const { start } = await this.describeSegment({ sessionId, segmentId });
      return { version: start.v, parent: start.parent?.session_id };
    } catch {
      return undefined; // a damaged or vanished session has no child link to index
    }
  }

  async lookupSessionOf(segmentId: string): Promise<string | undefined> {
    assertSafeId(segmentId, "segment");
    for (const sessionId of await this.listSessions()) {
      if (this.exists(join(this.root, sessionId, `${segmentId}.jsonl`))) return sessionId;
    }
    return undefined;
  }

  async close(): Promise<void> {
    this.last = undefined;
    releaseLocksOf(this);
    this.segments.closeAll();
    this.positions.clear();
  }

  /** Takes (or renews) the segment's lock and returns the exact committed state of its file. */
  private lockedSegment(
    ref: SegmentRef,
    path: string,
    signal?: AbortSignal,
  ): OpenSegment | Promise<OpenSegment> {
    const held = acquireOrRenewLease(this.lockPathOf(path), this, this.lockPolicy, ref, signal);
    if (typeof held === "boolean") return this.segments.view(ref, path, held);
    return held.then((continuous) => this.segments.view(ref, path, continuous));
  }

  private lockPathOf(path: string): string {
    let lockPath = this.lockPaths.get(path);
    if (lockPath === undefined) {
      if (this.lockPaths.size >= MAX_LOCK_PATHS) this.lockPaths.clear();
      lockPath = `${path}.lock`;
      this.lockPaths.set(path, lockPath);
    }
    return lockPath;
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

markAppendNow(FsStore.prototype.append);

/**
 * The bytes of a new segment's lines: each entry's serialized parts, framed when v2. Short lines
 * are gathered into chunks of about 64 Ki characters; a long one comes as the chunks `frameParts` makes.
 */
function* lines(encoded: readonly string[][], version: LineFormat): Iterable<Buffer> {
  let pending = "";
  for (let seq = 0; seq < encoded.length; seq++) {
    const parts = encoded[seq] as string[];
    if (parts.length === 1 || version === 1) {
      const body = parts.join("");
      pending += version === 1 ? `${body}\n` : `${frameLine(body, seq)}\n`;
      if (pending.length < 64 * 1024) continue;
      yield Buffer.from(pending, "utf8");
      pending = "";
    } else {
      if (pending.length > 0) yield Buffer.from(pending, "utf8");
      pending = "";
      yield* frameParts(parts, seq);
    }
  }
  if (pending.length > 0) yield Buffer.from(pending, "utf8");
}
