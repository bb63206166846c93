import { constants } from "node:fs";
import { lstat, open, readdir, realpath } from "node:fs/promises";
import { join, sep } from "node:path";

/** `path` is `dir` or lies below it, by whole components (both canonical). */
export function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

/** Largest file the skill tool reads (a SKILL.md, or a bundled file). */
export const SKILL_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Why `relative` cannot name a bundled file of a skill, before the file system is asked: an empty
 * path, an absolute one, a backslash, a NUL, or a `.`, `..` or empty segment. Undefined when the
 * path is plain; `resolveInside` still checks where it really leads.
 */
export function bundledPathProblem(relative: string): string | undefined {
  if (relative === "") return "the path is empty";
  if (relative.includes("\0")) return "the path contains a NUL character";
  if (relative.includes("\\")) return "the path contains a backslash; write it with /";
  if (relative.startsWith("/")) return "the path is absolute; give it relative to the skill's directory";
  if (relative.split("/").some((part) => part === "" || part === "." || part === ".."))
    return "the path has an empty, . or .. segment; give it relative to the skill's directory, without ..";
  return undefined;
}

/** A path resolved inside a directory: its canonical form, or why it cannot be used. */
export type Resolved = { ok: true; path: string } | { ok: false; problem: string; missing?: true };

/**
 * The canonical path of `dir/relative`, only when it stays inside `dir` (itself canonical) once
 * every symbolic link is resolved: a link that leads out of the directory — anywhere, even
 * elsewhere in the workspace — is refused, so a skill can only ever hand out its own files.
 */
export async function resolveInside(dir: string, relative: string): Promise<Resolved> {
  let real: string;
  try {
    real = await realpath(join(dir, relative));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, problem: "no such file", missing: true };
    return { ok: false, problem: `cannot be read (${code ?? String(error)})` };
  }
  if (!isInside(real, dir))
    return { ok: false, problem: "it leads out of the skill's directory (a symbolic link)" };
  return { ok: true, path: real };
}

/**
 * Reads a regular file at canonical `path` (not following a link that replaced it since it was
 * resolved), at most `SKILL_FILE_MAX_BYTES`.
 */
export async function readContained(
  path: string,
): Promise<{ ok: true; bytes: Buffer } | { ok: false; problem: string }> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    return {
      ok: false,
      problem: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, problem: "it is not a regular file" };
    if (stat.size > SKILL_FILE_MAX_BYTES)
      return { ok: false, problem: `it is ${stat.size} bytes, over the limit of ${SKILL_FILE_MAX_BYTES}` };
    return { ok: true, bytes: await handle.readFile() };
  } finally {
    await handle.close();
  }
}

/** Most files a skill's listing of bundled files names; more are counted, never silently left out. */
export const BUNDLED_FILES_MAX = 200;
const BUNDLED_DEPTH_MAX = 6;

/**
 * The files a skill bundles, relative to its canonical directory `dir`, sorted: every regular file
 * below it except SKILL.md itself and hidden names (`.git`), through subdirectories up to a depth,
 * following no link out of the directory. `omitted` counts those past `BUNDLED_FILES_MAX`.
 */
export async function bundledFiles(dir: string): Promise<{ files: string[]; omitted: number }> {
  const found: string[] = [];
  // Links between subdirectories can make a walk repeat itself: it is bounded by entries seen too.
  let seen = 0;
  const walk = async (relative: string, depth: number): Promise<void> => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(join(dir, relative), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name.startsWith(".") || ++seen > BUNDLED_FILES_MAX * 10) continue;
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (path === "SKILL.md") continue;
      const resolved = await resolveInside(dir, path);
      if (!resolved.ok) continue;
      const stat = await lstat(resolved.path).catch(() => undefined);
      if (stat?.isDirectory()) {
        if (depth < BUNDLED_DEPTH_MAX && resolved.path !== dir) await walk(path, depth + 1);
      } else if (stat?.isFile()) {
        found.push(path);
      }
    }
  };
  await walk("", 1);
  const files = found.sort();
  return { files: files.slice(0, BUNDLED_FILES_MAX), omitted: Math.max(0, files.length - BUNDLED_FILES_MAX) };
}
