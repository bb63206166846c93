import { lstat, readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Permission } from "@podkit/manifest";
import type { SandboxPolicy } from "../backend.js";

/**
 * Host directories a program needs to run, shown read-only in every sandbox: binaries, libraries
 * and the system configuration (certificates, `/etc/passwd`, locales). Nothing under a home
 * directory, `/var`, `/run`, `/srv`, `/mnt` or `/media` is shown unless the scope names it.
 */
export const SYSTEM_DIRS = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/opt",
  "/nix/store",
] as const;

/** How the host's system directories appear in a sandbox: read-only, or as the symlinks they are. */
export interface SystemMounts {
  readonly dirs: readonly string[];
  readonly steps: readonly MountStep[];
}

/**
 * The steps showing `dirs` (those that exist) as the host has them. They do not change while a
 * pod runs, so the backend reads them once rather than at every command.
 */
export async function systemMounts(dirs: readonly string[]): Promise<SystemMounts> {
  const steps: MountStep[] = [];
  for (const dir of dirs) {
    const info = await lstat(dir).catch(() => undefined);
    if (info?.isSymbolicLink()) steps.push({ op: "symlink", path: dir, target: await readlink(dir) });
    else if (info?.isDirectory()) steps.push({ op: "ro-bind", path: dir });
  }
  return { dirs, steps };
}

/** One step of the sandbox's file system, applied in order by bubblewrap. */
export type MountStep =
  /** The host path shown at the same path, writable (`bind`) or read-only (`ro-bind`). */
  | { readonly op: "bind" | "ro-bind"; readonly path: string }
  /** A symlink as the host has it (`/bin -> usr/bin` on a merged-usr system). */
  | { readonly op: "symlink"; readonly path: string; readonly target: string }
  /** A fresh private mount: `tmpfs` (empty, writable, gone after the call), `proc`, `dev`. */
  | { readonly op: "tmpfs" | "proc" | "dev"; readonly path: string }
  /** Hidden: an unreadable, unwritable placeholder of the same kind bound over it. */
  | { readonly op: "mask"; readonly path: string; readonly kind: "file" | "dir" };

interface Ordered {
  readonly step: MountStep;
  /** Path components: parents are mounted before what lies beneath them. */
  readonly depth: number;
  /** At one depth: base mounts, then scope binds, then masks and read-only caps. */
  readonly rank: number;
}

/**
 * The sandbox's file system for `policy`, as bubblewrap steps in the order they must be applied.
 * Everything starts hidden (bubblewrap's empty root); then:
 * - the system directories read-only, a private `/proc`, `/dev` and `/tmp`, and a private empty
 *   home unless the scope covers it;
 * - every allow target of the scope that exists, writable where the scope grants write at it and
 *   read-only where it grants read (a target the deny rules close entirely is left out); below a
 *   non-recursive target, the subdirectories whose contents the scope does not grant are hidden;
 * - every deny target that exists and would be visible: hidden when the scope grants nothing there,
 *   read-only when it grants read;
 * - podkit's own directories read-only where they would be writable.
 * The scope decides every permission on canonical paths, so this is the scope, not a second list.
 * A path that does not exist when the command starts gets no step (documented in docs/sandbox.md).
 */
export async function planMounts(
  policy: SandboxPolicy,
  system: SystemMounts | Promise<SystemMounts> = systemMounts(SYSTEM_DIRS),
): Promise<MountStep[]> {
  const { scope } = policy;
  const { dirs: systemDirs, steps: systemSteps } = await system;
  const steps: Ordered[] = [];
  const add = (step: MountStep, rank: number) => steps.push({ step, depth: depthOf(step.path), rank });
  const visible: { path: string; permission: Permission }[] = [];

  for (const step of systemSteps) {
    add(step, 0);
    if (step.op === "ro-bind") visible.push({ path: step.path, permission: "read" });
  }
  add({ op: "proc", path: "/proc" }, 0);
  add({ op: "dev", path: "/dev" }, 0);
  add({ op: "tmpfs", path: "/tmp" }, 0);
  const home = policy.home;
  if (
    home !== undefined &&
    home !== "/" &&
    !isInside(home, "/tmp") &&
    !systemDirs.some((d) => isInside(home, d))
  )
    add({ op: "tmpfs", path: home }, 0);

  const targets = [...new Set(scope.allow.map((rule) => rule.target))];
  for (const target of targets) {
    const permission = scope.permissionAtCanonical(target);
    if (permission === null || !(await exists(target))) continue;
    add({ op: permission === "write" ? "bind" : "ro-bind", path: target }, 1);
    visible.push({ path: target, permission });
  }
  // What a bind shows of a non-recursive target's subdirectories is more than the scope grants.
  for (const rule of scope.allow) {
    if (rule.recursive) continue;
    const shown = scope.permissionAtCanonical(rule.target);
    if (shown === null) continue;
    for (const child of await subdirectories(rule.target)) {
      // A stand-in for anything below the child (a NUL never occurs in a real name).
      const below = scope.permissionAtCanonical(join(child, "\0"));
      if (below === shown || targets.some((t) => isInside(t, child) && t !== child)) continue;
      if (below === null) add({ op: "mask", path: child, kind: "dir" }, 2);
      else if (below === "read") add({ op: "ro-bind", path: child }, 2);
    }
  }

  const capped = [...scope.deny.map((rule) => rule.target), ...policy.protectedPaths];
  for (const path of new Set(capped)) {
    const shownAs = deepestCover(visible, path);
    if (shownAs === undefined) continue;
    const info = await stat(path).catch(() => undefined);
    if (info === undefined) continue;
    const granted = policy.protectedPaths.includes(path)
      ? cap(scope.permissionAtCanonical(path), "read")
      : scope.permissionAtCanonical(path);
    if (granted === null) add({ op: "mask", path, kind: info.isDirectory() ? "dir" : "file" }, 2);
    else if (granted === "read" && shownAs === "write") add({ op: "ro-bind", path }, 2);
  }

  const ordered = steps.sort((a, b) => a.depth - b.depth || a.rank - b.rank);
  // Nothing is mounted beneath a hidden path: bubblewrap could not create the mount point, and the
  // scope grants nothing there anyway (a deny covers its subtree).
  const masks = ordered.filter((o) => o.step.op === "mask").map((o) => o.step.path);
  return ordered
    .filter((o) => !masks.some((mask) => mask !== o.step.path && isInside(o.step.path, mask)))
    .map((o) => o.step);
}

function cap(permission: Permission | null, at: Permission): Permission | null {
  return permission === "write" ? at : permission;
}

/** The permission of the deepest visible mount covering `path`, if any covers it. */
function deepestCover(
  visible: readonly { path: string; permission: Permission }[],
  path: string,
): Permission | undefined {
  let best: { path: string; permission: Permission } | undefined;
  for (const entry of visible) {
    if (isInside(path, entry.path) && (best === undefined || entry.path.length > best.path.length))
      best = entry;
  }
  return best?.permission;
}

/** True when `path` is `dir` or lies beneath it (by whole components). */
export function isInside(path: string, dir: string): boolean {
  if (dir === "/") return true;
  return path === dir || path.startsWith(`${dir}/`);
}

function depthOf(path: string): number {
  return path.split("/").filter((part) => part !== "").length;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory()).map((entry) => join(dir, entry.name));
}
