import { randomBytes } from "node:crypto";
import { dirname } from "node:path";
import type { LineFormat } from "../entry/line-frame.js";
import type { Pause } from "../entry/time-slice.js";
import { AppendFailedError, SessionStoreUsageError } from "../errors.js";
import { errorCode, type SyncFs } from "./sync-fs.js";

/** A segment file this store has open, and what it knows about it. */
export interface OpenSegment {
  /** Set once the store closed the file: the next append views the segment afresh. */
  closed: boolean;
  path: string;
  fd: number;
  ino: number;
  /** Length up to and including the last newline: everything before is committed. */
  committedSize: number;
  /** Committed lines. */
  count: number;
  /** Length of the file when last looked at; more than `committedSize` means a torn tail. */
  fileSize: number;
  /** Format of the segment's lines; appends keep it. */
  version: LineFormat;
}

function rollBack(fs: SyncFs, segment: OpenSegment, failure: unknown, detail: string): AppendFailedError {
  try {
    fs.ftruncateSync(segment.fd, segment.committedSize);
    segment.fileSize = segment.committedSize;
  } catch (rollbackError) {
    return new AppendFailedError({
      file: segment.path,
      detail: `${detail}; rolling back failed too (${(rollbackError as Error).message}), the next append repairs the tail`,
      cause: failure,
    });
  }
  return new AppendFailedError({ file: segment.path, detail, cause: failure });
}

/**
 * Appends `data[0, length)` (one or more complete lines, each ending in a newline) in a single
 * positional write at the committed end, after cutting any torn tail. On failure or a short
 * write the file is truncated back to its previous length and `AppendFailedError` is thrown.
 */
export function appendOnce(
  fs: SyncFs,
  segment: OpenSegment,
  data: Buffer,
  length: number,
  lines: number,
  fsync: boolean,
): void {
  if (segment.fileSize !== segment.committedSize) {
    fs.ftruncateSync(segment.fd, segment.committedSize);
    segment.fileSize = segment.committedSize;
  }
  let written: number;
  try {
    written = fs.writeSync(segment.fd, data, 0, length, segment.committedSize);
    if (fsync) fs.fsyncSync(segment.fd);
  } catch (error) {
    throw rollBack(fs, segment, error, (error as Error).message);
  }
  if (written !== length) {
    throw rollBack(fs, segment, undefined, `short write: ${written} of ${length} bytes`);
  }
  segment.committedSize += length;
  segment.fileSize = segment.committedSize;
  segment.count += lines;
}

function writeAll(fs: SyncFs, fd: number, chunk: Buffer): void {
  let offset = 0;
  while (offset < chunk.length) offset += fs.writeSync(fd, chunk, offset, chunk.length - offset);
}

function unlinkQuietly(fs: SyncFs, path: string): void {
  try {
    fs.unlinkSync(path);
  } catch {
    // Already gone, or the directory is unusable: nothing left to clean up.
  }
}

function syncDirectory(fs: SyncFs, path: string): void {
  const dir = fs.openSync(dirname(path), "r");
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

/** Options of a whole-file write. */
export interface WholeFileWrite {
  fs: SyncFs;
  fsync: boolean;
  /** Called between chunks: long files are written without holding the event loop. */
  pause: Pause;
}

/** A file just written: its inode and length. */
export interface WrittenFile {
  ino: number;
  size: number;
}

/**
 * Writes `chunks` to a temp file next to `path` (flushed when `fsync`) and returns its name and
 * inode. Each chunk is one small synchronous write; `pause` runs between them.
 */
async function writeTemp(
  path: string,
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  write: WholeFileWrite,
): Promise<WrittenFile & { temp: string }> {
  const { fs } = write;
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const fd = fs.openSync(temp, "wx");
  let size = 0;
  let ino: number;
  try {
    for await (const chunk of chunks) {
      writeAll(fs, fd, chunk);
      size += chunk.length;
      await write.pause();
    }
    if (write.fsync) fs.fsyncSync(fd);
    ino = fs.fstatSync(fd).ino;
  } catch (error) {
    fs.closeSync(fd);
    unlinkQuietly(fs, temp);
    throw error;
  }
  fs.closeSync(fd);
  return { temp, ino, size };
}

/**
 * Creates `path` holding `chunks`, atomically and exclusively: the content goes to a temp file,
 * which is then hard-linked to `path` — `link` fails when `path` exists, so of two processes
 * creating the same segment exactly one succeeds and readers never see a partial file. Throws
 * `SessionStoreUsageError` when the segment exists.
 */
export async function createFileExclusive(
  path: string,
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  write: WholeFileWrite,
  what: { segmentId: string },
): Promise<WrittenFile> {
  const { fs } = write;
  const { temp, ino, size } = await writeTemp(path, chunks, write);
  try {
    fs.linkSync(temp, path);
  } catch (error) {
    if (errorCode(error) === "EEXIST") {
      throw new SessionStoreUsageError(
        `segment ${what.segmentId} already exists at ${path}; segments are never replaced`,
      );
    }
    throw error;
  } finally {
    unlinkQuietly(fs, temp);
  }
  if (write.fsync) syncDirectory(fs, path);
  return { ino, size };
}

/**
 * Replaces `path` with its own first `length` bytes: copied in chunks to a temp file that is
 * renamed over it (readers see the old or the new file, whole). The caller holds the segment's
 * lock throughout.
 */
export async function rewritePrefix(
  path: string,
  fd: number,
  length: number,
  write: WholeFileWrite,
): Promise<WrittenFile> {
  const { fs } = write;
  const chunk = 1 << 20;
  function* prefix(): Iterable<Buffer> {
    for (let position = 0; position < length; position += chunk) {
      const buffer = Buffer.allocUnsafe(Math.min(chunk, length - position));
      let got = 0;
      while (got < buffer.length) {
        const n = fs.readSync(fd, buffer, got, buffer.length - got, position + got);
        if (n === 0)
          throw new Error(`${path} ended at ${position + got} bytes while ${length} were being copied`);
        got += n;
      }
      yield buffer;
    }
  }
  const { temp, ino, size } = await writeTemp(path, prefix(), write);
  try {
    fs.renameSync(temp, path);
  } catch (error) {
    unlinkQuietly(fs, temp);
    throw error;
  }
  if (write.fsync) syncDirectory(fs, path);
  return { ino, size };
}
