import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, link, lstat, mkdir, open, readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { BlobAgeOptions, BlobStore } from "../blobs/blob-store.js";
import { assertBlobBytes, assertBlobDigest, blobDigest } from "../blobs/digest.js";
import { BlobCorruptError, NotFoundError, SessionStoreError, SessionStoreUsageError } from "../errors.js";
import { errorCode } from "./sync-fs.js";

/**
 * The blobs' directory under the store's root. A session id begins with a letter or a digit, so no
 * session can be named `.blobs`, and session listings skip names beginning with a dot.
 */
export const BLOBS_DIR = ".blobs";
const ALGORITHM_DIR = "sha256";
const SHARD = /^[0-9a-f]{2}$/;
const REST = /^[0-9a-f]{62}$/;
/** `<62 hex>.tmp-<pid>-<hex>`: a blob being written (a put killed midway leaves one). */
const TEMP = ".tmp-";
/** `<62 hex>.gc-<pid>-<hex>`: a blob a removal moved aside to read its age where no put renews it. */
const ASIDE = ".gc-";

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Options of `FsBlobStore`. */
export interface FsBlobStoreOptions {
  /** The session store's root; blobs live in `<root>/.blobs/sha256/<2 hex>/<62 hex>`. */
  root: string;
  /** Flush each blob file and its directory (the store's `durability: "fsync"`). */
  fsync: boolean;
  pid?: number;
}

/**
 * The blobs of an `FsStore`: one file per blob at `<root>/.blobs/sha256/<first 2 hex>/<other 62
 * hex>` (256 shard directories, so none grows to millions of names).
 *
 * A put writes a temp file in the blob's own directory (`O_EXCL | O_NOFOLLOW`), flushes it when
 * the store flushes, and renames it to the digest, then flushes the directory: the digest names a
 * whole blob or nothing, and a put killed midway leaves only a temp file, which `removeDebris`
 * cleans. The digest is checked before it becomes a path, the directories from the root down must
 * be real directories (never a symbolic link) and blob files are opened with `O_NOFOLLOW`, so no
 * read or write leaves the store through a link. A blob's age is its file's modification time:
 * a put of stored bytes renews it, and a removal conditional on age moves the file aside before
 * reading its age, so a put racing it keeps the blob (see `remove`). Every call is asynchronous.
 * Age is read against the kernel's clock (file times), never an injected one.
 */
export class FsBlobStore implements BlobStore {
  /** `<root>/.blobs/sha256`. */
  readonly dir: string;
  private readonly root: string;
  private readonly fsync: boolean;
  private readonly pid: number;

  constructor(options: FsBlobStoreOptions) {
    this.root = options.root;
    this.dir = join(options.root, BLOBS_DIR, ALGORITHM_DIR);
    this.fsync = options.fsync;
    this.pid = options.pid ?? process.pid;
  }

  async put(bytes: Uint8Array): Promise<string> {
    assertBlobBytes(bytes);
    const digest = await blobDigest(bytes);
    const { dir, path, rest } = this.locate(digest);
    return withIoError("storing blob", path, async () => {
      await this.ensureDirs(dir);
      if (await this.renew(path, bytes.length)) {
        // Another writer may have renamed it into place without flushing the directory yet.
        if (this.fsync) await syncDir(dir);
        return digest;
      }
      const temp = join(dir, `${rest}${TEMP}${this.pid}-${randomBytes(4).toString("hex")}`);
      try {
        const handle = await open(temp, CREATE_FLAGS, 0o644);
        try {
          await handle.writeFile(bytes);
          if (this.fsync) await handle.sync();
        } finally {
          await handle.close();
        }
        // Same bytes from a concurrent put may already be there: the rename replaces them whole.
        await rename(temp, path);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw error;
      }
      if (this.fsync) await syncDir(dir);
      return digest;
    });
  }

  async get(digest: string): Promise<Uint8Array> {
    const { dir, path } = this.locate(digest);
    return withIoError("reading blob", path, async () => {
      const missing = () => new NotFoundError({ what: "blob", id: digest, where: this.dir });
      if (!(await this.realDirs(dir))) throw missing();
      let handle: FileHandle;
      try {
        handle = await open(path, READ_FLAGS);
      } catch (error) {
        if (errorCode(error) === "ENOENT") throw missing();
        if (isLinkRefused(error)) {
          throw new BlobCorruptError({
            digest,
            where: path,
            reason: "it is a symbolic link, not a blob file",
          });
        }
        throw error;
      }
      let bytes: Buffer;
      try {
        if (!(await handle.stat()).isFile()) {
          throw new BlobCorruptError({ digest, where: path, reason: "it is not a regular file" });
        }
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
      const actual = await blobDigest(bytes);
      if (actual !== digest) {
        throw new BlobCorruptError({
          digest,
          where: path,
          reason: `its ${bytes.length} bytes hash to ${actual}`,
        });
      }
      return bytes;
    });
  }

  async has(digest: string): Promise<boolean> {
    const { dir, path } = this.locate(digest);
    return withIoError("looking up blob", path, async () => {
      if (!(await this.realDirs(dir))) return false;
      return (await lstatIfAny(path))?.isFile() === true;
    });
  }

  async *list(options?: BlobAgeOptions): AsyncIterable<string> {
    const cutoff = cutoffOf(options);
    if (!(await withIoError("listing blobs", this.dir, () => this.realDirs(this.dir)))) return;
    const shards = await withIoError("listing blobs", this.dir, () =>
      readdir(this.dir, { withFileTypes: true }),
    );
    for (const shard of shards) {
      // A Dirent's type is the entry's own: a symbolic link is not a directory here.
      if (!shard.isDirectory() || !SHARD.test(shard.name)) continue;
      const shardDir = join(this.dir, shard.name);
      const files = await withIoError("listing blobs", shardDir, () =>
        readdir(shardDir, { withFileTypes: true }).catch(ignoreMissing([])),
      );
      for (const file of files) {
        if (!file.isFile() || !REST.test(file.name)) continue;
        if (cutoff !== undefined) {
          const stat = await withIoError("listing blobs", shardDir, () =>
            lstatIfAny(join(shardDir, file.name)),
          );
          if (stat === undefined || stat.mtimeMs >= cutoff) continue;
        }
        yield `sha256:${shard.name}${file.name}`;
      }
    }
  }

  /**
   * With `olderThanMs`, each blob is first renamed aside (`<name>.gc-…`) and its age read there:
   * a put that renewed it before the rename shows in that age, and one after the rename no longer
   * finds it under its name and writes it anew (`renew` checks the name still holds the file it
   * renewed). A blob found young is put back. Without `olderThanMs` the file is simply unlinked.
   */
  async remove(digests: readonly string[], options?: BlobAgeOptions): Promise<string[]> {
    for (const digest of digests) assertBlobDigest(digest);
    const cutoff = cutoffOf(options);
    const removed: string[] = [];
    for (const digest of digests) {
      const { dir, path, rest } = this.locate(digest);
      const gone = await withIoError("removing blob", path, async () => {
        if (!(await this.realDirs(dir))) return false;
        if (cutoff === undefined) {
          if ((await lstatIfAny(path))?.isFile() !== true) return false;
          return unlink(path).then(() => true, ignoreMissing(false));
        }
        const aside = join(dir, `${rest}${ASIDE}${this.pid}-${randomBytes(4).toString("hex")}`);
        try {
          await rename(path, aside);
        } catch (error) {
          return ignoreMissing(false)(error);
        }
        const stat = await lstat(aside);
        if (stat.isFile() && stat.mtimeMs < cutoff) {
          await unlink(aside);
          return true;
        }
        await putBack(aside, path);
        return false;
      });
      if (gone) removed.push(digest);
    }
    return removed;
  }

  /**
   * Temp files of puts that never finished, last written more than `olderThanMs` ago, are
   * removed; a blob left aside by a removal that never finished is put back under its name (it
   * is whole; the next collection decides again). Returns the paths handled.
   */
  async removeDebris(options: { olderThanMs: number; dryRun?: boolean }): Promise<string[]> {
    const cutoff = Date.now() - options.olderThanMs;
    const handled: string[] = [];
    return withIoError("cleaning blob debris", this.dir, async () => {
      if (!(await this.realDirs(this.dir))) return handled;
      for (const shard of await readdir(this.dir, { withFileTypes: true })) {
        if (!shard.isDirectory() || !SHARD.test(shard.name)) continue;
        const shardDir = join(this.dir, shard.name);
        for (const file of await readdir(shardDir, { withFileTypes: true }).catch(ignoreMissing([]))) {
          const [rest, kind] = debrisOf(file.name);
          if (!file.isFile() || rest === undefined) continue;
          const path = join(shardDir, file.name);
          if (kind === "temp") {
            const stat = await lstatIfAny(path);
            if (stat === undefined || stat.mtimeMs >= cutoff) continue;
            if (options.dryRun !== true) await unlink(path).catch(ignoreMissing(undefined));
          } else if (options.dryRun !== true) {
            await putBack(path, join(shardDir, rest));
          }
          handled.push(path);
        }
      }
      return handled;
    });
  }

  /** The blob's directory and file; refuses a malformed digest before any path is made of it. */
  private locate(digest: string): { dir: string; path: string; rest: string } {
    assertBlobDigest(digest);
    const hex = digest.slice("sha256:".length);
    const dir = join(this.dir, hex.slice(0, 2));
    const rest = hex.slice(2);
    return { dir, path: join(dir, rest), rest };
  }

  /** `<root>/.blobs`, `<root>/.blobs/sha256` and, for a shard, the shard directory. */
  private chain(dir: string): string[] {
    const blobs = join(this.root, BLOBS_DIR);
    return dir === this.dir ? [blobs, this.dir] : [blobs, this.dir, dir];
  }

  /**
   * True when every directory from the root down to `dir` exists as a real directory, false when
   * one is missing; `SessionStoreUsageError` when one is a symbolic link or not a directory.
   */
  private async realDirs(dir: string): Promise<boolean> {
    const chain = this.chain(dir);
    const stats = await Promise.all(chain.map((path) => lstatIfAny(path)));
    for (const [index, stat] of stats.entries()) {
      if (stat === undefined) return false;
      assertRealDir(chain[index] as string, stat);
    }
    return true;
  }

  /** Creates the directories down to `dir` one at a time, each checked before anything goes into it. */
  private async ensureDirs(dir: string): Promise<void> {
    if (await this.realDirs(dir)) return;
    await mkdir(this.root, { recursive: true });
    for (const path of this.chain(dir)) {
      await mkdir(path).catch((error: unknown) => {
        if (errorCode(error) !== "EEXIST") throw error;
      });
      assertRealDir(path, await lstat(path));
    }
  }

  /**
   * Renews a stored blob of the right size (its modification time becomes now) and says whether
   * it is still there under its name afterwards. A file of another size (a copy cut short
   * outside podkit), a link or anything else is not a blob: the put writes it anew.
   */
  private async renew(path: string, size: number): Promise<boolean> {
    let handle: FileHandle;
    try {
      handle = await open(path, READ_FLAGS);
    } catch (error) {
      if (errorCode(error) === "ENOENT" || isLinkRefused(error)) return false;
      throw error;
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile() || stat.size !== size) return false;
      const now = new Date();
      await handle.utimes(now, now);
      // A removal may have moved the file aside before the renewal, to delete it: only a file
      // still under the digest counts as stored.
      const current = await lstatIfAny(path);
      return current !== undefined && current.ino === stat.ino && current.dev === stat.dev;
    } finally {
      await handle.close();
    }
  }
}

function cutoffOf(options: BlobAgeOptions | undefined): number | undefined {
  const olderThanMs = options?.olderThanMs;
  if (olderThanMs === undefined) return undefined;
  if (!Number.isFinite(olderThanMs) || olderThanMs < 0) {
    throw new SessionStoreUsageError(`olderThanMs must be a duration in ms (0 or more), got ${olderThanMs}`);
  }
  return Date.now() - olderThanMs;
}

/** `[<62 hex>, "temp" | "aside"]` for a temp file or a blob set aside, else `[]`. */
function debrisOf(name: string): [string, "temp" | "aside"] | [] {
  const rest = name.slice(0, 62);
  if (!REST.test(rest)) return [];
  const tail = name.slice(62);
  if (tail.startsWith(TEMP)) return [rest, "temp"];
  if (tail.startsWith(ASIDE)) return [rest, "aside"];
  return [];
}

/** Puts a blob set aside back under its name, unless a put stored it again meanwhile. */
async function putBack(aside: string, path: string): Promise<void> {
  await link(aside, path).catch((error: unknown) => {
    if (errorCode(error) !== "EEXIST") throw error;
  });
  await unlink(aside).catch(ignoreMissing(undefined));
}

function assertRealDir(path: string, stat: Stats): void {
  if (stat.isDirectory()) return; // lstat: a symbolic link is never a directory here
  const what = stat.isSymbolicLink() ? "a symbolic link" : "not a directory";
  throw new SessionStoreUsageError(
    `${path} is ${what}: blobs are kept only in real directories under the session store's root, ` +
      "and podkit follows no link out of the store; remove it (or move the real directory there)",
  );
}

/** `lstat`, undefined for a path that does not exist. */
async function lstatIfAny(path: string): Promise<Stats | undefined> {
  return lstat(path).catch(ignoreMissing(undefined));
}

/** A catch handler: `fallback` for ENOENT, rethrows anything else. */
function ignoreMissing<T>(fallback: T): (error: unknown) => T {
  return (error) => {
    if (errorCode(error) === "ENOENT") return fallback;
    throw error;
  };
}

/** `O_NOFOLLOW` met a link: ELOOP on Linux and macOS, EMLINK on FreeBSD. */
function isLinkRefused(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ELOOP" || code === "EMLINK";
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Runs a file operation; a failure of the file system itself (a full disk, permissions, an I/O
 * error) becomes a `SessionStoreError` of kind `transient` naming the path, keeping the cause.
 */
async function withIoError<T>(operation: string, path: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (SessionStoreError.isInstance(error)) throw error;
    const code = errorCode(error);
    throw new SessionStoreError(
      `${path}: ${operation} failed (${code ?? (error as Error).message ?? String(error)})`,
      { cause: error, errorKind: "transient" },
    );
  }
}
