import { CRC_TAIL_LENGTH, hasFrameTail, type LineFormat } from "../entry/line-frame.js";
import { NotFoundError } from "../errors.js";
import type { SegmentRef } from "../store/store.js";
import type { SegmentPositions } from "./segment-positions.js";
import { scanLines } from "./segment-scan.js";
import type { OpenSegment } from "./segment-write.js";
import { errorCode, type SyncFs } from "./sync-fs.js";

/** Segment files kept open at once: a long-lived writer moves on to new segments (compaction, forks). */
const MAX_OPEN_SEGMENTS = 16;

/**
 * The segment files a store writes to, kept open with what is known about each: inode,
 * committed length, entry count, format. Only the holder of a segment's lock asks for its view.
 */
export class OpenSegments {
  private readonly open = new Map<string, OpenSegment>();
  private readonly probe = Buffer.alloc(1);

  constructor(
    private readonly fs: SyncFs,
    private readonly positions: SegmentPositions,
  ) {}

  /**
   * The exact committed state of the segment file at `path`, for the holder of its lock. When
   * the lock was held continuously only bytes past the committed end need checking; otherwise
   * the path is re-checked too: same inode → count the lines past the known committed length
   * (a torn tail is not a line); replaced (truncated by someone) or shrunk → full rescan.
   */
  view(ref: SegmentRef, path: string, continuous: boolean): OpenSegment {
    const cached = this.open.get(path);
    if (continuous && cached !== undefined) return this.checkTail(cached);

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
    // A position a reader or an earlier writer saw spares counting the lines before it.
    const base = this.positions.start(path, ino, size, Number.MAX_SAFE_INTEGER, false);
    const scan = scanLines(this.fs, fd, { from: base.offset, to: size, startCount: base.index });
    const segment: OpenSegment = {
      closed: false,
      path,
      fd,
      ino,
      committedSize: scan.committedSize,
      count: scan.count,
      fileSize: size,
      version: base.version ?? this.versionOf(fd, scan.committedSize),
    };
    const oldest = this.open.keys().next();
    if (this.open.size >= MAX_OPEN_SEGMENTS && !oldest.done) this.forget(oldest.value);
    this.open.set(path, segment);
    this.remember(segment);
    return segment;
  }

  /**
   * `segment` (open, its lock held continuously since it was last viewed) after checking its
   * tail: no cooperating writer can have run, but a stray one (an editor, `echo >>`) might have.
   * A 1-byte read past the committed end (cheaper than fstat) keeps "cut the torn tail before
   * each append" literally true without trusting the lock alone.
   */
  checkTail(segment: OpenSegment): OpenSegment {
    if (this.fs.readSync(segment.fd, this.probe, 0, 1, segment.committedSize) !== 0) {
      this.rescanTail(segment, this.fs.fstatSync(segment.fd).size);
    }
    return segment;
  }

  /** The open segment at `path` (its committed end is a line position), if any. */
  endOf(path: string): Readonly<OpenSegment> | undefined {
    return this.open.get(path);
  }

  /** Records the segment's committed end as a known line position (readers start from it). */
  remember(segment: OpenSegment): void {
    this.positions.record(segment.path, segment.ino, segment.version, segment.count, segment.committedSize);
  }

  /** A segment's format, from the frame (or its absence) on its last committed line. */
  private versionOf(fd: number, committedSize: number): LineFormat {
    const length = Math.min(committedSize - 1, CRC_TAIL_LENGTH + 1);
    if (length <= CRC_TAIL_LENGTH) return 2;
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

  /** Closes `path` if open; the next view reopens it. */
  forget(path: string): void {
    const segment = this.open.get(path);
    if (segment === undefined) return;
    segment.closed = true;
    this.open.delete(path);
    try {
      this.fs.closeSync(segment.fd);
    } catch {
      // Already unusable; nothing else to release.
    }
  }

  closeAll(): void {
    for (const path of [...this.open.keys()]) this.forget(path);
  }
}
