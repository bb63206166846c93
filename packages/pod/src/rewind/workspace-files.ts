import { constants } from "node:fs";
import { lstat, mkdir, open, rename, rmdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { blobDigest } from "@podkit/session-store";
import { RewindPathBlockedError } from "./errors.js";

// A rewind reads and writes the workspace by the paths an untrusted log names: every path is
// checked to be a plain relative path, every directory on the way must be a real directory (never
// a symbolic link), and the file itself is opened with O_NOFOLLOW, replaced by rename and removed
// by unlink — none of which follows a link at the last step either.

/** What stands at a workspace path. */
export type Presence =
  | { kind: "file"; digest: string; mode: number }
  | { kind: "absent" }
  | { kind: "symlink" }
  | { kind: "directory" }
  | { kind: "other" };

/** Why `path` (from the log) is not a plain workspace-relative POSIX path, or undefined when it is one. */
export function unsafePathReason(path: unknown): string | undefined {
  if (typeof path !== "string" || path === "") return "the path is empty or not a string";
  if (path.length > 4096) return "the path is longer than 4096 characters";
  if (path.includes("\0")) return "the path holds a NUL character";
  if (path.includes("\\")) return "the path holds a backslash (paths are POSIX, separated by /)";
  if (path.startsWith("/")) return `${JSON.stringify(path)} is absolute`;
  const parts = path.split("/");
  if (parts.some((part) => part === "" || part === "." || part === ".."))
    return `${JSON.stringify(path)} has an empty, "." or ".." part`;
  if (parts[0] === ".podkit" && (parts[1] === "sessions" || parts[1] === "rewind"))
    return `${JSON.stringify(path)} lies in the session store or the rewind journal`;
  return undefined;
}

/**
 * Checks the directories on the way to `path` below `root`: each must be a directory, not a
 * symbolic link. Returns `missing` when one does not exist (nor anything below it), `ok` when all
 * exist; a symbolic link is `RewindPathBlockedError`, a file where a directory belongs `notDirectory`.
 */
async function walkParents(root: string, path: string): Promise<"ok" | "missing" | { notDirectory: string }> {
  const parts = path.split("/");
  let at = root;
  for (let i = 0; i < parts.length - 1; i++) {
    at = join(at, parts[i] as string);
    let stat: Awaited<ReturnType<typeof lstat>>;
    try {
      stat = await lstat(at);
    } catch (error) {
      if (codeOf(error) === "ENOENT") return "missing";
      throw error;
    }
    const shown = parts.slice(0, i + 1).join("/");
    if (stat.isSymbolicLink())
      throw new RewindPathBlockedError(path, `${shown} is a symbolic link, which a rewind never follows`);
    if (!stat.isDirectory()) return { notDirectory: shown };
  }
  return "ok";
}

/** What stands at `path` below `root` now, a file's content hashed (no link is followed). */
export async function inspectPath(root: string, path: string): Promise<Presence> {
  const parents = await walkParents(root, path);
  if (parents !== "ok") return { kind: "absent" };
  const target = join(root, path);
  let stat: Awaited<ReturnType<typeof lstat>>;
  try {
    stat = await lstat(target);
  } catch (error) {
    if (codeOf(error) === "ENOENT") return { kind: "absent" };
    throw error;
  }
  if (stat.isSymbolicLink()) return { kind: "symlink" };
  if (stat.isDirectory()) return { kind: "directory" };
  if (!stat.isFile()) return { kind: "other" };
  const bytes = await readNoFollow(target);
  if (bytes === undefined) return inspectPath(root, path); // replaced meanwhile: look again
  return { kind: "file", digest: await blobDigest(bytes), mode: stat.mode & 0o7777 };
}

/** The digest of what `presence` says, `null` for absent, else its kind. */
export function presenceLabel(presence: Presence): string | null {
  if (presence.kind === "file") return presence.digest;
  if (presence.kind === "absent") return null;
  return presence.kind;
}

async function readNoFollow(file: string): Promise<Uint8Array | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = codeOf(error);
    if (code === "ELOOP" || code === "ENOENT") return undefined;
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * The directories missing on the way to `path` (workspace-relative, outermost first), after
 * checking no directory on the way is a link; a file where a directory belongs blocks the path.
 */
export async function missingParents(root: string, path: string): Promise<string[]> {
  const parts = path.split("/");
  const walked = await walkParents(root, path);
  if (walked === "ok") return [];
  if (walked !== "missing") {
    throw new RewindPathBlockedError(path, `${walked.notDirectory} is a file where a directory belongs`);
  }
  const missing: string[] = [];
  for (let i = parts.length - 1; i >= 1; i--) {
    const dir = parts.slice(0, i).join("/");
    try {
      await lstat(join(root, dir));
      break;
    } catch (error) {
      if (codeOf(error) !== "ENOENT") throw error;
      missing.unshift(dir);
    }
  }
  return missing;
}

/** Creates the directories `dirs` (workspace-relative, outermost first) that do not exist yet. */
export async function createDirectories(root: string, dirs: readonly string[]): Promise<void> {
  for (const dir of dirs) {
    await walkParents(root, `${dir}/x`);
    try {
      await mkdir(join(root, dir));
    } catch (error) {
      if (codeOf(error) !== "EEXIST") throw error;
    }
  }
}

/** Removes `dirs` (innermost first) where they exist and are empty; never anything that holds a file. */
export async function removeEmptyDirectories(root: string, dirs: readonly string[]): Promise<void> {
  for (const dir of [...dirs].reverse()) {
    try {
      await rmdir(join(root, dir));
    } catch (error) {
      const code = codeOf(error);
      if (code !== "ENOENT" && code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOTDIR") throw error;
    }
  }
}

/** Writes `bytes` to the new file `temp` (workspace-relative) and syncs it; `mode` as the target had. */
export async function writeStaged(
  root: string,
  temp: string,
  bytes: Uint8Array,
  mode: number | null,
): Promise<void> {
  await walkParents(root, temp);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(join(root, temp), flags, 0o666);
  try {
    await handle.writeFile(bytes);
    if (mode !== null) await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The content of staged file `temp`, or undefined when it is not there as a regular file. */
export async function readStaged(root: string, temp: string): Promise<Uint8Array | undefined> {
  if ((await walkParents(root, temp)) !== "ok") return undefined;
  return readNoFollow(join(root, temp));
}

/** Moves staged file `temp` over `path` (a link standing at `path` is replaced, not followed). */
export async function moveIntoPlace(root: string, temp: string, path: string): Promise<void> {
  await walkParents(root, path);
  await rename(join(root, temp), join(root, path));
}

/** Removes `path`, or `temp` (a link is removed itself); gone already is fine. */
export async function removeFile(root: string, path: string): Promise<void> {
  if ((await walkParents(root, path)) !== "ok") return;
  try {
    await unlink(join(root, path));
  } catch (error) {
    if (codeOf(error) !== "ENOENT") throw error;
  }
}

/** Flushes the directory entries of `dirs` (workspace-relative, "" for the root) to disk. */
export async function syncDirectories(root: string, dirs: Iterable<string>): Promise<void> {
  for (const dir of new Set(dirs)) {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(dir === "" ? root : join(root, dir), constants.O_RDONLY | constants.O_DIRECTORY);
    } catch (error) {
      if (codeOf(error) === "ENOENT") continue;
      throw error;
    }
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/** The workspace-relative directory of `path` ("" for the root). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? "" : path.slice(0, slash);
}

export function codeOf(error: unknown): string | undefined {
  return (error as { code?: unknown } | null)?.code as string | undefined;
}
