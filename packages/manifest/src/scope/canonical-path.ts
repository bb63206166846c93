import { lstat, readlink, realpath } from "node:fs/promises";
import { isAbsolute, join } from "node:path";

/** A path turned into its canonical form, or why that is impossible. */
export type CanonicalPath =
  | { ok: true; path: string }
  | { ok: false; problem: "parent-traversal" | "unresolvable"; detail: string };

/** Same bound as the kernel's ELOOP limit on Linux. */
const MAX_LINK_HOPS = 40;

/**
 * The canonical form of an absolute path: every symlink resolved by the OS (`realpath`), so `..`
 * in the existing part is followed physically, not lexically. A path that does not exist yet is
 * canonicalized through its nearest existing ancestor plus the literal tail; a `..` in that tail
 * is refused (it could climb out of a directory without anyone checking), and a dangling
 * symlink is followed to where a write would land, so symlinks never add authority.
 */
export async function canonicalPath(path: string, hops = 0): Promise<CanonicalPath> {
  if (!isAbsolute(path)) return unresolvable(`"${path}" is not absolute`);
  if (path.includes("\0")) return unresolvable("the path contains a NUL character");
  try {
    return { ok: true, path: await realpath(path) };
  } catch (error) {
    if (!isMissing(error)) return unresolvable(errorText(error));
  }
  const parts = path.split("/").filter((part) => part !== "");
  for (let i = parts.length - 1; i >= 0; i--) {
    const prefix = `/${parts.slice(0, i).join("/")}`;
    let real: string;
    try {
      real = await realpath(prefix);
    } catch (error) {
      if (isMissing(error)) continue;
      return unresolvable(errorText(error));
    }
    const tail = parts.slice(i);
    const head = tail[0] ?? "";
    // The first tail component is what the OS could not resolve: absent, under a non-directory,
    // or a symlink whose target is missing. In the last case a write would follow the link.
    if (head !== "." && head !== "..") {
      const link = join(real, head);
      const stat = await lstat(link).catch(() => undefined);
      if (stat?.isSymbolicLink()) {
        if (hops >= MAX_LINK_HOPS) return unresolvable("too many levels of symbolic links");
        const target = await readlink(link);
        const base = isAbsolute(target) ? target : `${real}/${target}`;
        return canonicalPath([base, ...tail.slice(1)].join("/"), hops + 1);
      }
    }
    if (tail.includes("..")) {
      return {
        ok: false,
        problem: "parent-traversal",
        detail: `".." follows "${prefix === "/" ? "" : prefix}/${head}", which does not exist`,
      };
    }
    return { ok: true, path: join(real, ...tail.filter((part) => part !== ".")) };
  }
  return unresolvable("no part of the path exists");
}

/**
 * True when `path` lies inside `target` by whole components: a recursive rule covers the whole
 * subtree, a non-recursive one the target and its direct children. Both must be canonical.
 */
export function isCovered(path: string, target: string, recursive: boolean): boolean {
  if (isPlainAbsolute(path) && isPlainAbsolute(target)) {
    // The common case, compared in place (every file a walk lists is checked here).
    if (!path.startsWith(target)) return false;
    if (path.length === target.length) return true;
    if (path.charCodeAt(target.length) !== SLASH) return false;
    return recursive || path.indexOf("/", target.length + 1) === -1;
  }
  const pathParts = components(path);
  const targetParts = components(target);
  if (pathParts.length < targetParts.length) return false;
  for (let i = 0; i < targetParts.length; i++) if (pathParts[i] !== targetParts[i]) return false;
  return recursive || pathParts.length - targetParts.length <= 1;
}

const SLASH = 0x2f;

/** `/a/b` as canonical paths are written: absolute, not the root, no empty component, no trailing `/`. */
function isPlainAbsolute(path: string): boolean {
  return (
    path.length > 1 &&
    path.charCodeAt(0) === SLASH &&
    path.charCodeAt(path.length - 1) !== SLASH &&
    !path.includes("//")
  );
}

function components(path: string): string[] {
  return path.split("/").filter((part) => part !== "");
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function unresolvable(detail: string): CanonicalPath {
  return { ok: false, problem: "unresolvable", detail };
}

function errorText(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e.code ? `${e.code}: ${e.message}` : String(error);
}
