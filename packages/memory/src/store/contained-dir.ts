import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import {
  type FileHandle,
  link,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  unlink,
} from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { MemoryFileRefusedError } from "../errors.js";
import { isInside, podkitRoot } from "./contained-read.js";

const { O_APPEND, O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_RDONLY, O_WRONLY } = constants;

/**
 * On Linux a directory is opened once, its real location read back from the kernel
 * (`/proc/self/fd/<fd>`), and every file in it is then addressed as `/proc/self/fd/<fd>/<name>`:
 * the kernel resolves that from the opened directory itself, so a path component swapped for a
 * symbolic link after the check cannot redirect the write (openat semantics without openat).
 * Elsewhere the verified real path is used, which narrows the window but cannot close it.
 */
const HAS_PROC_FD = process.platform === "linux";

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** A workspace-relative label for messages. */
const labelOf = (workspace: string, path: string) => relative(workspace, path).split(sep).join("/");

/**
 * One directory of the memory trees (or the staging, usage and audit areas), opened for writing
 * and verified to resolve inside `<workspace>/.podkit` — by every component from `.podkit` down,
 * so nothing is created through a link that leads outside either. Files are then created,
 * replaced, appended to and removed relative to it (see `HAS_PROC_FD`); a file that is itself a
 * symbolic link is written only when it leads inside `.podkit` (as reads follow it), logs never.
 * Close it when done (`withContainedDir` does).
 */
export class ContainedDir {
  private constructor(
    private readonly handle: FileHandle | undefined,
    /** How operations address the directory: `/proc/self/fd/<fd>`, or its verified real path. */
    private readonly base: string,
    /** The real path of the directory, verified inside `root`. */
    readonly real: string,
    private readonly root: string,
    private readonly workspace: string,
    /** The directory as the caller named it (for messages). */
    private readonly shown: string,
  ) {}

  /**
   * Opens `dir` (an absolute path under `<workspace>/.podkit`, as `memoryPaths` builds it),
   * creating missing directories on the way when `create` (default true). Undefined when it does
   * not exist and `create` is false. A component resolving outside `.podkit` is a
   * `MemoryFileRefusedError` naming it and where it leads; nothing was created through it.
   */
  static async open(
    workspace: string,
    dir: string,
    options: { create?: boolean } = {},
  ): Promise<ContainedDir | undefined> {
    const rel = relative(join(workspace, ".podkit"), dir);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      throw new MemoryFileRefusedError(`${dir} is not under ${join(workspace, ".podkit")}`, "write");
    }
    const root = await podkitRoot(workspace);
    const parts = rel === "" ? [] : rel.split(sep);
    return ContainedDir.walk(workspace, root, parts, options.create ?? true);
  }

  private static async walk(
    workspace: string,
    root: string,
    parts: readonly string[],
    create: boolean,
  ): Promise<ContainedDir | undefined> {
    // The workspace's own real path is trusted; `.podkit` and everything below it is checked.
    let shown = join(workspace, ".podkit");
    let current = await ContainedDir.step(workspace, root, root, shown, create);
    for (const part of parts) {
      if (current === undefined) return undefined;
      const parent: ContainedDir = current;
      shown = join(shown, part);
      try {
        current = await ContainedDir.step(workspace, root, `${parent.base}/${part}`, shown, create);
      } finally {
        await parent.close();
      }
    }
    return current;
  }

  /** Opens (creating when allowed) one component and verifies where it really is. */
  private static async step(
    workspace: string,
    root: string,
    path: string,
    shown: string,
    create: boolean,
  ): Promise<ContainedDir | undefined> {
    const label = labelOf(workspace, shown);
    let opened = await ContainedDir.openDir(path, label);
    if (opened === undefined) {
      if (!create) return undefined;
      // mkdir never follows a link in the last component (it fails with EEXIST instead), and its
      // parent is the verified directory: nothing can be created outside here.
      await mkdir(path).catch((error: unknown) => {
        if (codeOf(error) !== "EEXIST") throw error;
      });
      opened = await ContainedDir.openDir(path, label);
      if (opened === undefined) {
        throw new MemoryFileRefusedError(
          `${label} could not be created; check what is in its place`,
          "write",
        );
      }
    }
    const { handle, real } = opened;
    if (real !== root && !isInside(real, root)) {
      await handle?.close();
      throw new MemoryFileRefusedError(
        `${label} resolves to ${real}, outside ${root}; memory writes only inside .podkit — replace the symbolic link with a real directory`,
        "write",
      );
    }
    const base = handle === undefined ? real : `/proc/self/fd/${handle.fd}`;
    return new ContainedDir(handle, base, real, root, workspace, shown);
  }

  /** Opens a directory (following links) and reads back where it really is; undefined when absent. */
  private static async openDir(
    path: string,
    label: string,
  ): Promise<{ handle: FileHandle | undefined; real: string } | undefined> {
    if (!HAS_PROC_FD) {
      const real = await realpath(path).catch((error: unknown) => {
        if (codeOf(error) === "ENOENT") return undefined;
        throw error;
      });
      return real === undefined ? undefined : { handle: undefined, real };
    }
    let handle: FileHandle;
    try {
      handle = await open(path, O_RDONLY | O_DIRECTORY);
    } catch (error) {
      if (codeOf(error) === "ENOENT") return undefined;
      if (codeOf(error) === "ENOTDIR") {
        throw new MemoryFileRefusedError(
          `${label} is not a directory; memory needs a directory there`,
          "write",
        );
      }
      throw error;
    }
    try {
      return { handle, real: await readlink(`/proc/self/fd/${handle.fd}`) };
    } catch {
      await handle.close();
      // Fail closed: without the kernel's answer the location cannot be verified.
      throw new MemoryFileRefusedError(
        `cannot verify where ${label} leads (/proc/self/fd is not readable); nothing was written`,
        "write",
      );
    }
  }

  /** The path through which the file `name` of this directory is addressed. */
  private at(name: string): string {
    if (name === "" || name.includes("/") || name === "." || name === "..") {
      throw new MemoryFileRefusedError(`"${name}" is not a file name`, "write");
    }
    return `${this.base}/${name}`;
  }

  private label(name: string): string {
    return labelOf(this.workspace, join(this.shown, name));
  }

  /**
   * Replaces `name` with `data` atomically (a fresh temp file beside it, created exclusively and
   * never through a link, renamed over it). A `name` that is a link leading inside `.podkit` is
   * written where it leads; one leading outside (or nowhere) is refused.
   */
  async writeAtomic(name: string, data: string): Promise<void> {
    const link = await this.linkTarget(name);
    if (link !== undefined) {
      await withContainedReal(this, link, (dir) => dir.writeAtomic(basename(link), data));
      return;
    }
    const temp = `.${name}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await this.writeNew(temp, data);
      await rename(this.at(temp), this.at(name));
    } catch (error) {
      await unlink(this.at(temp)).catch(() => undefined);
      throw error;
    }
  }

  /** Creates `name` with `data`; fails (EEXIST) when anything, a link included, is already there. */
  async writeNew(name: string, data: string): Promise<void> {
    const handle = await open(this.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
    try {
      await handle.writeFile(data, "utf8");
    } finally {
      await handle.close();
    }
  }

  /** Appends `text` to the plain file `name` (created when missing); a link there is refused. */
  async append(name: string, text: string): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(this.at(name), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0o666);
    } catch (error) {
      if (codeOf(error) === "ELOOP") throw this.notPlain(name, "write");
      throw error;
    }
    try {
      if (!(await handle.stat()).isFile()) throw this.notPlain(name, "write");
      await handle.appendFile(text, "utf8");
    } finally {
      await handle.close();
    }
  }

  /** The bytes of the plain file `name` (never through a link), or undefined when it does not exist. */
  async read(name: string, maxBytes: number): Promise<Buffer | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.at(name), O_RDONLY | O_NOFOLLOW);
    } catch (error) {
      if (codeOf(error) === "ENOENT") return undefined;
      if (codeOf(error) === "ELOOP") throw this.notPlain(name, "read");
      throw error;
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw this.notPlain(name, "read");
      if (stats.size > maxBytes) {
        throw new MemoryFileRefusedError(
          `${this.label(name)} is ${stats.size} bytes, more than the ${maxBytes} it may hold; move it aside`,
          "read",
        );
      }
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  /** Removes `name` (a link itself, never what it points to); absent is fine. */
  async remove(name: string): Promise<void> {
    await unlink(this.at(name)).catch((error: unknown) => {
      if (codeOf(error) !== "ENOENT") throw error;
    });
  }

  /** Hard-links `from` to `to` in this directory; false when `to` exists (link never replaces). */
  async linkExclusive(from: string, to: string): Promise<boolean> {
    try {
      await link(this.at(from), this.at(to));
      return true;
    } catch (error) {
      if (codeOf(error) === "EEXIST") return false;
      throw error;
    }
  }

  /** Renames `from` to `to` within this directory (replacing `to` itself, never what it points to). */
  async rename(from: string, to: string): Promise<void> {
    await rename(this.at(from), this.at(to));
  }

  /** The names in this directory. */
  async list(): Promise<string[]> {
    return readdir(this.base);
  }

  /** Size and modification time of `name` (the entry itself), or undefined when absent. */
  async stat(name: string): Promise<{ size: number; mtimeMs: number; isFile: boolean } | undefined> {
    const stats = await lstat(this.at(name)).catch((error: unknown) => {
      if (codeOf(error) === "ENOENT") return undefined;
      throw error;
    });
    return stats === undefined
      ? undefined
      : { size: stats.size, mtimeMs: stats.mtimeMs, isFile: stats.isFile() };
  }

  async close(): Promise<void> {
    await this.handle?.close();
  }

  /** Where `name` leads when it is a link inside `.podkit`; undefined when it is not a link. */
  private async linkTarget(name: string): Promise<string | undefined> {
    const stats = await lstat(this.at(name)).catch((error: unknown) => {
      if (codeOf(error) === "ENOENT") return undefined;
      throw error;
    });
    if (stats === undefined) return undefined;
    if (!stats.isSymbolicLink()) {
      if (!stats.isFile()) throw this.notPlain(name, "write");
      return undefined;
    }
    const real = await realpath(this.at(name)).catch(() => undefined);
    if (real === undefined || !isInside(real, this.root)) {
      throw new MemoryFileRefusedError(
        `${this.label(name)} is a symbolic link ${real === undefined ? "to nothing" : `to ${real}, outside ${this.root}`}; memory writes only inside .podkit — replace the link with the file itself`,
        "write",
      );
    }
    return real;
  }

  private notPlain(name: string, op: "read" | "write"): MemoryFileRefusedError {
    return new MemoryFileRefusedError(
      `${this.label(name)} is not a plain file (a symbolic link or a directory); memory ${op === "read" ? "reads" : "writes"} only plain files there — move it aside`,
      op,
    );
  }

  /** Opens the directory holding `real` (a real path inside `.podkit`), from `.podkit` down. */
  static async openReal(from: ContainedDir, real: string): Promise<ContainedDir> {
    const parts = relative(from.root, dirname(real))
      .split(sep)
      .filter((p) => p !== "");
    const dir = await ContainedDir.walk(from.workspace, from.root, parts, false);
    if (dir === undefined)
      throw new MemoryFileRefusedError(`${real} disappeared while it was written`, "write");
    return dir;
  }
}

async function withContainedReal<T>(
  from: ContainedDir,
  real: string,
  fn: (dir: ContainedDir) => Promise<T>,
): Promise<T> {
  const dir = await ContainedDir.openReal(from, real);
  try {
    return await fn(dir);
  } finally {
    await dir.close();
  }
}

/** Runs `fn` on the contained directory `dir` (see `ContainedDir.open`, created when missing), then closes it. */
export async function withContainedDir<T>(
  workspace: string,
  dir: string,
  fn: (dir: ContainedDir) => Promise<T>,
): Promise<T> {
  const opened = await ContainedDir.open(workspace, dir);
  if (opened === undefined) throw new MemoryFileRefusedError(`${dir} could not be opened`, "write");
  try {
    return await fn(opened);
  } finally {
    await opened.close();
  }
}

/** `withContainedDir` for reading: undefined (without creating anything) when `dir` does not exist. */
export async function withExistingDir<T>(
  workspace: string,
  dir: string,
  fn: (dir: ContainedDir) => Promise<T>,
): Promise<T | undefined> {
  const opened = await ContainedDir.open(workspace, dir, { create: false });
  if (opened === undefined) return undefined;
  try {
    return await fn(opened);
  } finally {
    await opened.close();
  }
}

/** Writes `file` (under `<workspace>/.podkit`) atomically through its contained directory. */
export function writeContained(workspace: string, file: string, data: string): Promise<void> {
  return withContainedDir(workspace, dirname(file), (dir) => dir.writeAtomic(basename(file), data));
}
