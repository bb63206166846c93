import { randomBytes } from "node:crypto";
import { dirname } from "node:path";
import type { FormatVersion } from "../entry/entry-schema.js";
import { AppendFailedError } from "../errors.js";
import type { SyncFs } from "./sync-fs.js";

/** A segment file this store has open, and what it knows about it. */
export interface OpenSegment {
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
  version: FormatVersion;
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
 * Appends `data` (one or more complete lines, each ending in a newline) in a single positional
 * write at the committed end, after cutting any torn tail. On failure or a short write the file
 * is truncated back to its previous length and `AppendFailedError` is thrown.
 */
export function appendOnce(
  fs: SyncFs,
  segment: OpenSegment,
  data: Buffer,
  lines: number,
  fsync: boolean,
): void {
  if (segment.fileSize !== segment.committedSize) {
    fs.ftruncateSync(segment.fd, segment.committedSize);
    segment.fileSize = segment.committedSize;
  }
  let written: number;
  try {
    written = fs.writeSync(segment.fd, data, 0, data.length, segment.committedSize);
    if (fsync) fs.fsyncSync(segment.fd);
  } catch (error) {
    throw rollBack(fs, segment, error, (error as Error).message);
  }
  if (written !== data.length) {
    throw rollBack(fs, segment, undefined, `short write: ${written} of ${data.length} bytes`);
  }
  segment.committedSize += data.length;
  segment.fileSize = segment.committedSize;
  segment.count += lines;
}

function writeAll(fs: SyncFs, fd: number, chunk: Buffer): void {
  let offset = 0;
  while (offset < chunk.length) offset += fs.writeSync(fd, chunk, offset, chunk.length - offset);
}

/**
 * Replaces (or creates) `path` with `chunks` atomically: a temp file in the same directory,
 * flushed when `fsync`, then renamed over the target. Readers see the old or the new file whole.
 */
export function writeWholeFile(fs: SyncFs, path: string, chunks: readonly Buffer[], fsync: boolean): void {
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const fd = fs.openSync(temp, "wx");
  try {
    for (const chunk of chunks) writeAll(fs, fd, chunk);
    if (fsync) fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.unlinkSync(temp);
    throw error;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(temp, path);
  } catch (error) {
    fs.unlinkSync(temp);
    throw error;
  }
  if (fsync) {
    const dir = fs.openSync(dirname(path), "r");
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  }
}
