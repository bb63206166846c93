import { constants } from "node:fs";
import { openChecked } from "../fs/checked-open.js";
import type { FileStat } from "./tree-scan.js";

/** A tracked file's bytes and the stat they were read under. */
export interface TrackedContent {
  readonly bytes: Buffer;
  readonly stat: FileStat;
  /** The file changed while it was read: the bytes may be neither version, so look again next time. */
  readonly unsettled: boolean;
}

/**
 * Reads the regular file at canonical `path` whole, never through a symlink (its real path is
 * verified after the open, so a parent swapped for a link cannot bring a file from elsewhere into
 * the blobs). Undefined when it is gone or is no longer a regular file there.
 */
export async function readTracked(path: string): Promise<TrackedContent | undefined> {
  let handle: Awaited<ReturnType<typeof openChecked>>;
  try {
    handle = await openChecked(path, constants.O_RDONLY, path);
  } catch {
    return undefined;
  }
  try {
    const before = await handle.stat();
    if (!before.isFile()) return undefined;
    const bytes = await handle.readFile();
    const after = await handle.stat();
    const stat = { size: after.size, mtimeMs: after.mtimeMs, ctimeMs: after.ctimeMs, ino: after.ino };
    return { bytes, stat, unsettled: before.ctimeMs !== after.ctimeMs || bytes.length !== after.size };
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}
