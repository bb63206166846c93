import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import type { ErrorKind } from "@podkit/llm-worker";
import { hasMarker, ToolsError } from "../errors.js";
import { BINARY_PROBE_BYTES, looksBinary } from "./text.js";

const PATH_CHANGED_MARKER = Symbol.for("podkit.tools.error.path-changed");

/** The file system changed between the scope check and the open (a symlink appeared). */
export class PathChangedError extends ToolsError {
  readonly [PATH_CHANGED_MARKER] = true;
  /** Someone else changed the workspace in between: not now, rather than wrong. */
  override readonly errorKind: ErrorKind = "conflict";

  constructor(shown: string) {
    super(`"${shown}" changed while it was being opened (a symlink appeared); nothing was read or written`, {
      hint: "check who else is changing the workspace, then try again",
    });
    this.name = "PathChangedError";
  }

  static override isInstance(value: unknown): value is PathChangedError {
    return hasMarker(value, PATH_CHANGED_MARKER);
  }
}

const NOT_VERIFIABLE_MARKER = Symbol.for("podkit.tools.error.path-not-verifiable");

/** The kernel could not be asked where an opened file really is (`/proc/self/fd` unreadable). */
export class PathNotVerifiableError extends ToolsError {
  readonly [NOT_VERIFIABLE_MARKER] = true;
  /** This host lacks what the check needs (`/proc`); another may have it. */
  override readonly errorKind: ErrorKind = "unsupported";

  constructor(shown: string) {
    super(
      `cannot verify where "${shown}" really is: /proc/self/fd cannot be read, so nothing was read or written`,
      {
        hint: "the file tools check every opened file's real path through /proc (Linux); mount /proc for the pod",
      },
    );
    this.name = "PathNotVerifiableError";
  }

  static override isInstance(value: unknown): value is PathNotVerifiableError {
    return hasMarker(value, NOT_VERIFIABLE_MARKER);
  }
}

const HAS_PROC_FD = process.platform === "linux";
/** Where Linux shows the real path of each open descriptor. */
const FD_LINKS = "/proc/self/fd";
/** Never wait for a writer on a FIFO swapped in, nor for a terminal: a file either has bytes or not. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The one check of where an open descriptor really points, shared by every open below: the path
 * the kernel gives for it, or null when it cannot be asked. Null never equals an approved path,
 * so every caller fails closed. (A read of procfs answers from memory, never from disk.)
 * `fdLinks` is where the kernel lists descriptors; tests point it at a directory that cannot be read.
 */
export function realPathOfDescriptor(fd: number, fdLinks = FD_LINKS): string | null {
  try {
    return readlinkSync(`${fdLinks}/${fd}`);
  } catch {
    return null;
  }
}

/**
 * Opens a canonical path without following a symlink in its last component (`O_NOFOLLOW`), then
 * asks the kernel where the descriptor really points and refuses if that is not the path the
 * scope approved — so a component swapped for a symlink after the check is caught instead of
 * followed. Reads never block on a FIFO (`O_NONBLOCK`). Throws `PathChangedError`, or
 * `PathNotVerifiableError` when the kernel cannot be asked; fs errors pass through.
 */
export async function openChecked(
  canonical: string,
  flags: number,
  shown: string,
  options: { mode?: number; fdLinks?: string } = {},
): Promise<FileHandle> {
  const readOnly = (flags & (constants.O_WRONLY | constants.O_RDWR)) === 0;
  const nonBlocking = readOnly ? constants.O_NONBLOCK : 0;
  let handle: FileHandle;
  try {
    handle = await open(canonical, flags | constants.O_NOFOLLOW | nonBlocking, options.mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw new PathChangedError(shown);
    throw error;
  }
  if (HAS_PROC_FD) {
    const actual = realPathOfDescriptor(handle.fd, options.fdLinks);
    if (actual !== canonical) {
      await handle.close();
      throw actual === null ? new PathNotVerifiableError(shown) : new PathChangedError(shown);
    }
  }
  return handle;
}

/**
 * Why a file was not read: not text, too big, a FIFO, socket or device, its real path is not the
 * one listed ("changed") or cannot be asked ("unverifiable"), or the errno code that stopped the
 * open or read (`ELOOP` for a symlink swapped in, `EACCES`, `EMFILE`, …).
 */
export type SkipReason = "binary" | "too-big" | "not-regular" | "changed" | "unverifiable" | (string & {});

/** Buffers reused across the files of one search, so reading allocates almost nothing. */
export interface Scratch {
  /** Where each file's first read goes; its size decides what counts as a small file. */
  buffer: Buffer;
  /** Where a larger file is read chunk by chunk; made on first need. */
  chunk?: Buffer;
}

/**
 * `openChecked` for a file read synchronously (grep's single file, a `.gitignore`): no final
 * symlink followed, the real path verified, a regular file, never blocking on a FIFO. Returns
 * the descriptor (the caller closes it) or why it cannot be read.
 */
export function openFileChecked(canonical: string, fdLinks = FD_LINKS): number | SkipReason {
  let fd: number;
  try {
    fd = openSync(canonical, READ_FLAGS);
  } catch (error) {
    return errnoCode(error);
  }
  let refused: SkipReason | undefined;
  try {
    const actual = HAS_PROC_FD ? realPathOfDescriptor(fd, fdLinks) : canonical;
    if (actual !== canonical) refused = actual === null ? "unverifiable" : "changed";
    else if (!fstatSync(fd).isFile()) refused = "not-regular";
  } catch (error) {
    refused = errnoCode(error);
  }
  if (refused === undefined) return fd;
  closeSync(fd);
  return refused;
}

/** `openFileChecked`, then its whole content if it is at most `maxBytes` (into the scratch buffer). */
export function readSmallFileChecked(
  canonical: string,
  maxBytes: number,
  scratch: Scratch,
  fdLinks = FD_LINKS,
): Buffer | SkipReason {
  const fd = openFileChecked(canonical, fdLinks);
  if (typeof fd === "string") return fd;
  try {
    return readText(fd, maxBytes, scratch);
  } catch (error) {
    return errnoCode(error);
  } finally {
    closeSync(fd);
  }
}

/**
 * A directory opened once (`O_NOFOLLOW`) and verified to be the canonical directory the walk
 * listed. On Linux its files are then opened through `/proc/self/fd/<dir fd>/<name>`, which the
 * kernel resolves from the opened directory itself (an `openat` Node does not offer), so a parent
 * swapped for a symlink later cannot redirect them — one check per directory instead of one per
 * file. Elsewhere each file is opened by path with `O_NOFOLLOW`.
 */
export class CheckedDirectory {
  private constructor(
    private readonly fd: number | undefined,
    /** What a file name is appended to for its open: the descriptor's link, or the path itself. */
    private readonly prefix: string,
  ) {}

  /** Opens and verifies `canonicalDir`; the errno code when it vanished or is no longer that directory. */
  static open(canonicalDir: string, fdLinks = FD_LINKS): CheckedDirectory | SkipReason {
    if (!HAS_PROC_FD) return new CheckedDirectory(undefined, `${canonicalDir}/`);
    let fd: number;
    try {
      fd = openSync(canonicalDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (error) {
      return errnoCode(error);
    }
    const actual = realPathOfDescriptor(fd, fdLinks);
    if (actual === canonicalDir) return new CheckedDirectory(fd, `${fdLinks}/${fd}/`);
    closeSync(fd);
    return actual === null ? "unverifiable" : "changed";
  }

  /**
   * Opens the file `name` in this directory for reading (`O_NOFOLLOW | O_NONBLOCK`); the
   * descriptor, which the caller closes, or the errno code. No `fstat`: a directory swapped in
   * fails the read (`EISDIR`), a FIFO cannot block, and the reader's size bound stops anything
   * endless.
   */
  openFile(name: string): number | SkipReason {
    try {
      return openSync(this.prefix + name, READ_FLAGS);
    } catch (error) {
      return errnoCode(error);
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
  }
}

/**
 * Reads `fd` to its end into the scratch buffer: "binary" as soon as the first chunk shows a
 * NUL byte, "too-big" past `maxBytes`. A read shorter than asked ends it: for a regular file
 * POSIX allows that only at the end of the file (or for a signal, which Linux does not deliver
 * to a read of a local file).
 */
function readText(fd: number, maxBytes: number, scratch: Scratch): Buffer | SkipReason {
  let length = 0;
  for (;;) {
    if (length === scratch.buffer.length) {
      if (length > maxBytes) return "too-big";
      // Grows to one byte past the bound at most: that byte says the file is too big.
      const bigger = Buffer.allocUnsafe(Math.min(length * 2, maxBytes + 1));
      scratch.buffer.copy(bigger, 0, 0, length);
      scratch.buffer = bigger;
    }
    const wanted = scratch.buffer.length - length;
    const n = readSync(fd, scratch.buffer, length, wanted, null);
    if (
      length < BINARY_PROBE_BYTES &&
      looksBinary(scratch.buffer.subarray(length, Math.min(length + n, BINARY_PROBE_BYTES)))
    ) {
      return "binary";
    }
    length += n;
    if (n < wanted) break;
  }
  return length > maxBytes ? "too-big" : scratch.buffer.subarray(0, length);
}

/** The errno code of a file-system error (`EIO` for anything without one). */
export function errnoCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? "EIO";
}
