import { constants, type Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { assertSafeId, isSafeId } from "../ids.js";
import { listSegmentFiles } from "./list-dir.js";
import { errorCode, type SyncFs } from "./sync-fs.js";

/** A parent session directory holds one empty `.child-<id>` file per child session. */
const CHILD_PREFIX = ".child-";

/** What the index reads of a session's oldest segment start: its format version and its parent. */
export interface SessionOrigin {
  readonly version: number;
  readonly parent: string | undefined;
}

/**
 * The filesystem store's index of sub-pod sessions: the parent's directory holds an empty
 * `.child-<child id>` file per child, written before the child's first segment (a crash in
 * between leaves a marker without a session, which the listing skips). Every writer of log format
 * v3 keeps the index, so a parent whose oldest segment is v3 has all its children marked; one
 * written in v1 or v2 (before the index existed) may have children without markers, so its
 * children are found once per store instance by reading every session's oldest segment start, and
 * marked for any later reader.
 */
export class ChildIndex {
  private readonly scanned = new Map<string, Promise<void>>();

  constructor(
    private readonly root: string,
    private readonly fs: SyncFs,
    /** The oldest `segment_start` of a session (undefined when it has none, or it cannot be read). */
    private readonly originOf: (sessionId: string) => Promise<SessionOrigin | undefined>,
  ) {}

  /**
   * Records `childId` under `parentId` (idempotent). Nothing is written when the parent has no
   * directory here: its session is in another store, and no listing of this store could reach it.
   * The marker is opened with `O_NOFOLLOW`, so a symlink planted in its place is never written through.
   */
  record(parentId: string, childId: string): void {
    assertSafeId(parentId, "session");
    assertSafeId(childId, "session");
    const file = join(this.root, parentId, `${CHILD_PREFIX}${childId}`);
    let fd: number;
    try {
      fd = this.fs.openSync(
        file,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
    } catch (error) {
      const code = errorCode(error);
      if (code === "EEXIST" || code === "ENOENT" || code === "ENOTDIR") return;
      throw error;
    }
    this.fs.closeSync(fd);
  }

  /** The indexed children of `parentId` that have a segment, newest first (ids are UUIDv7). */
  async list(parentId: string): Promise<string[]> {
    assertSafeId(parentId, "session");
    const dir = join(this.root, parentId);
    const origin = await this.originOf(parentId);
    if (origin === undefined) return [];
    if (origin.version < 3) await this.scanOnce(parentId);
    let dirents: Dirent[];
    try {
      dirents = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return [];
      throw error;
    }
    const children: string[] = [];
    for (const dirent of dirents) {
      if (!dirent.isFile() || !dirent.name.startsWith(CHILD_PREFIX)) continue;
      const id = dirent.name.slice(CHILD_PREFIX.length);
      if (!isSafeId(id) || id === parentId) continue;
      const segments = listSegmentFiles(join(this.root, id));
      if (segments !== undefined && segments.length > 0) children.push(id);
    }
    return children.sort().reverse();
  }

  /** Marks the children of a session older than the index, once per store instance (see the class doc). */
  private scanOnce(parentId: string): Promise<void> {
    let scan = this.scanned.get(parentId);
    if (scan === undefined) {
      scan = this.scan(parentId).catch((error: unknown) => {
        this.scanned.delete(parentId);
        throw error;
      });
      this.scanned.set(parentId, scan);
    }
    return scan;
  }

  private async scan(parentId: string): Promise<void> {
    let dirents: Dirent[];
    try {
      dirents = await readdir(this.root, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) === "ENOENT") return;
      throw error;
    }
    for (const dirent of dirents) {
      const sessionId = dirent.name;
      if (!dirent.isDirectory() || !isSafeId(sessionId) || sessionId === parentId) continue;
      if ((await this.originOf(sessionId))?.parent === parentId) this.record(parentId, sessionId);
    }
  }
}
