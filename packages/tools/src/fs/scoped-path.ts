import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync } from "node:fs";
import { type FileHandle, open, readlink } from "node:fs/promises";
import { isAbsolute, relative } from "node:path";
import type { Permission, Scope } from "@podkit/manifest";
import { ToolsError } from "../errors.js";

/** What every filesystem tool needs: the scope and the workspace relative paths start from. */
export interface FsToolContext {
  readonly scope: Scope;
  readonly workspace: string;
  /**
   * Output bytes a tool may produce (the manifest's `[worker.tool_output]` cap for it, less room
   * for the summary); the tools stop there and say how to get the rest. Default 48 KiB.
   */
  readonly outputBudget?: (toolName: string) => number;
}

/** A path the scope allowed, in canonical form, and how to show it to the model. */
export type ScopedPath = { ok: true; path: string; shown: string } | { ok: false; message: string };

/**
 * Checks `path` (relative to the workspace, or absolute) against the scope on its canonical
 * form. A refusal carries the scope's own words (which rule refused, or that no rule allows it)
 * and never anything read from the file. Called on every tool call: nothing is cached, so a path
 * swapped for a symlink since the last call is judged by where it points now.
 */
export async function checkToolPath(ctx: FsToolContext, path: string, want: Permission): Promise<ScopedPath> {
  // Joined, not `resolve`d: a lexical fold of `..` would disagree with the OS (`link/..` is the
  // link target's parent); the scope canonicalizes physically.
  const absolute = isAbsolute(path) ? path : `${ctx.workspace}/${path}`;
  const check = await ctx.scope.check(absolute, want);
  if (check.ok) return { ok: true, path: check.path, shown: shownPath(ctx, check.path) };
  const hint =
    check.reason === "not-allowed" || check.reason === "read-only"
      ? ` ${want === "write" ? "Writable" : "Readable"} locations are listed in the scope summary.`
      : "";
  return { ok: false, message: `${check.message}.${hint}` };
}

/** A canonical path as the model should see it: relative to the workspace when inside it. */
export function shownPath(ctx: FsToolContext, canonical: string): string {
  const rel = relative(ctx.workspace, canonical);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? canonical : rel;
}

const PATH_CHANGED_MARKER = Symbol.for("podkit.tools.error.path-changed");

/** The file system changed between the scope check and the open (a symlink appeared). */
export class PathChangedError extends ToolsError {
  readonly [PATH_CHANGED_MARKER] = true;

  constructor(shown: string) {
    super(`"${shown}" changed while it was being opened (a symlink appeared); nothing was read or written`, {
      hint: "check who else is changing the workspace, then try again",
    });
    this.name = "PathChangedError";
  }

  static override isInstance(value: unknown): value is PathChangedError {
    return (
      typeof value === "object" &&
      value !== null &&
      (value as Record<symbol, unknown>)[PATH_CHANGED_MARKER] === true
    );
  }
}

const HAS_PROC_FD = process.platform === "linux";

/**
 * Opens a canonical path without following a symlink in its last component (`O_NOFOLLOW`), then
 * asks the kernel where the descriptor really points (`/proc/self/fd`) and refuses if that is not
 * the path the scope approved — so a component swapped for a symlink after the check is caught
 * instead of followed.
 */
export async function openChecked(
  canonical: string,
  flags: number,
  shown: string,
  mode?: number,
): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(canonical, flags | constants.O_NOFOLLOW, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw new PathChangedError(shown);
    throw error;
  }
  if (HAS_PROC_FD) {
    const actual = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => canonical);
    if (actual !== canonical) {
      await handle.close();
      throw new PathChangedError(shown);
    }
  }
  return handle;
}

/**
 * `openChecked` for a small file read synchronously (grep reads thousands in a row, and the
 * promise API costs several thread-pool round trips per file; callers run it in short slices
 * and yield to the event loop between them): no final symlink followed, the real path verified,
 * at most `maxBytes` read. Returns undefined for a file that vanished, was swapped, is not a
 * regular file or is larger than `maxBytes`.
 */
export function readSmallFileChecked(
  canonical: string,
  maxBytes: number,
  scratch: { buffer: Buffer },
): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(canonical, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    if (HAS_PROC_FD && readlinkSync(`/proc/self/fd/${fd}`) !== canonical) return undefined;
    return readRegularFile(fd, maxBytes, scratch);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * A directory opened once (`O_NOFOLLOW`) and verified to be the canonical directory the walk
 * listed. On Linux its files are then opened through `/proc/self/fd/<dir fd>/<name>`, which the
 * kernel resolves from the opened directory itself, so a parent swapped for a symlink later
 * cannot redirect them — one check per directory instead of one per file. Elsewhere each file
 * is opened by path with `O_NOFOLLOW`.
 */
export class CheckedDirectory {
  private constructor(
    private readonly dir: string,
    private readonly fd: number | undefined,
  ) {}

  /** Opens and verifies `canonicalDir`; undefined when it vanished or is no longer that directory. */
  static open(canonicalDir: string): CheckedDirectory | undefined {
    if (!HAS_PROC_FD) return new CheckedDirectory(canonicalDir, undefined);
    let fd: number;
    try {
      fd = openSync(canonicalDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch {
      return undefined;
    }
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === canonicalDir) return new CheckedDirectory(canonicalDir, fd);
    } catch {
      // fall through: treated as changed
    }
    closeSync(fd);
    return undefined;
  }

  /** Reads the regular file `name` in this directory; undefined as for `readSmallFileChecked`. */
  read(name: string, maxBytes: number, scratch: { buffer: Buffer }): Buffer | undefined {
    if (this.fd === undefined) return readSmallFileChecked(`${this.dir}/${name}`, maxBytes, scratch);
    let fd: number;
    try {
      fd = openSync(`/proc/self/fd/${this.fd}/${name}`, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return undefined;
    }
    try {
      return readRegularFile(fd, maxBytes, scratch);
    } catch {
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
  }
}

/** The whole content of a regular file descriptor into the (growing) scratch buffer. */
function readRegularFile(fd: number, maxBytes: number, scratch: { buffer: Buffer }): Buffer | undefined {
  const stat = fstatSync(fd);
  if (!stat.isFile() || stat.size > maxBytes) return undefined;
  // One byte more than stat says, so a file that grew meanwhile is noticed and read on.
  if (scratch.buffer.length < stat.size + 1) {
    scratch.buffer = Buffer.allocUnsafe(Math.max(stat.size + 1, scratch.buffer.length * 2));
  }
  let length = 0;
  for (;;) {
    const n = readSync(fd, scratch.buffer, length, scratch.buffer.length - length, length);
    if (n === 0) break;
    length += n;
    if (length === scratch.buffer.length) {
      if (length > maxBytes) return undefined;
      const bigger = Buffer.allocUnsafe(length * 2);
      scratch.buffer.copy(bigger);
      scratch.buffer = bigger;
    }
  }
  return scratch.buffer.subarray(0, length);
}

/** A file-system error as a one-line message without contents (`ENOENT: no such file`). */
export function fsErrorMessage(error: unknown, shown: string): string {
  if (PathChangedError.isInstance(error)) return error.message;
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case "ENOENT":
      return `"${shown}" does not exist`;
    case "EISDIR":
      return `"${shown}" is a directory; use glob to list it`;
    case "ENOTDIR":
      return `a parent of "${shown}" is not a directory`;
    case "EACCES":
    case "EPERM":
      return `the operating system refused access to "${shown}" (${code})`;
    default:
      return `cannot access "${shown}": ${code ?? String(error)}`;
  }
}
