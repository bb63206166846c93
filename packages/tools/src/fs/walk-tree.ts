import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { Scope } from "@podkit/manifest";
import ignoreModule, { type Ignore } from "ignore";
import { readSmallFileChecked } from "./scoped-path.js";

// A CommonJS module whose function is also its own `default`; this form type-checks under NodeNext.
const ignore = ignoreModule.default;

/** A regular file found by `walkTree`, with its canonical path and its path relative to the walk root. */
export interface WalkedFile {
  path: string;
  rel: string;
}

interface IgnoreLayer {
  /** The directory whose `.gitignore` this is. */
  base: string;
  rules: Ignore;
}

/**
 * Lists the regular files under `root`, one directory's files per batch (fewer awaits on big
 * trees), (a canonical directory) the scope lets the model read.
 * Symlinks are not followed (so every path stays canonical and nothing outside the tree is
 * reached through one), `.git` is skipped, and `.gitignore` files are honoured from `stopAt`
 * (the workspace) down, matched by the `ignore` package, git's own rule set. Subtrees a deny
 * rule closes are pruned unless an allow rule re-opens something deeper.
 */
export async function* walkTree(
  root: string,
  options: { scope: Scope; stopAt: string; signal?: AbortSignal },
): AsyncGenerator<WalkedFile[]> {
  const { scope } = options;
  const layers: IgnoreLayer[] = [];
  // .gitignore files between the workspace and the walk root apply too, as in git.
  if (root === options.stopAt || root.startsWith(options.stopAt + sep)) {
    const chain = relative(options.stopAt, root).split(sep).filter(Boolean);
    let dir = options.stopAt;
    for (let i = 0; i <= chain.length; i++) {
      const layer = await loadIgnore(dir, scope);
      if (layer) layers.push(layer);
      if (i < chain.length) dir = join(dir, chain[i] as string);
    }
  } else {
    const layer = await loadIgnore(root, scope);
    if (layer) layers.push(layer);
  }

  const stack: { dir: string; rel: string; layers: IgnoreLayer[] }[] = [{ dir: root, rel: "", layers }];
  while (stack.length > 0) {
    options.signal?.throwIfAborted();
    const {
      dir,
      rel: dirRel,
      layers: inherited,
    } = stack.pop() as { dir: string; rel: string; layers: IgnoreLayer[] };
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // vanished or unreadable: nothing to list
    }
    let active = inherited;
    if (dir !== root && entries.some((e) => e.name === ".gitignore" && e.isFile())) {
      const layer = await loadIgnore(dir, scope);
      if (layer) active = [...inherited, layer];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: { dir: string; rel: string; layers: IgnoreLayer[] }[] = [];
    const files: WalkedFile[] = [];
    for (const entry of entries) {
      if (entry.isSymbolicLink()) continue;
      const path = `${dir}/${entry.name}`;
      const rel = dirRel === "" ? entry.name : `${dirRel}/${entry.name}`;
      const isDir = entry.isDirectory();
      if (isDir && entry.name === ".git") continue;
      if (active.length > 0 && ignored(active, path, isDir)) continue;
      if (isDir) {
        if (scope.permissionAtCanonical(path) !== null || reopensBelow(scope, path)) {
          subdirs.push({ dir: path, rel, layers: active });
        }
      } else if (entry.isFile() && scope.permissionAtCanonical(path) !== null) {
        files.push({ path, rel });
      }
    }
    if (files.length > 0) yield files;
    stack.push(...subdirs.reverse());
  }
}

function ignored(layers: readonly IgnoreLayer[], path: string, isDir: boolean): boolean {
  for (const layer of layers) {
    const rel = relative(layer.base, path);
    if (rel === "" || rel.startsWith("..")) continue;
    if (layer.rules.ignores(isDir ? `${rel}/` : rel)) return true;
  }
  return false;
}

async function loadIgnore(dir: string, scope: Scope): Promise<IgnoreLayer | undefined> {
  const file = join(dir, ".gitignore");
  if (scope.permissionAtCanonical(file) === null) return undefined;
  // Read like any other file: a .gitignore that is a symlink out of the tree is not followed.
  const bytes = readSmallFileChecked(file, 1024 * 1024, { buffer: Buffer.allocUnsafe(4096) });
  return bytes === undefined ? undefined : { base: dir, rules: ignore().add(bytes.toString("utf8")) };
}

/** True when an allow rule targets something strictly below `dir` (a deny above it may not cover it). */
function reopensBelow(scope: Scope, dir: string): boolean {
  return scope.allow.some(
    (rule) => rule.target.startsWith(dir + sep) && scope.permissionAtCanonical(rule.target) !== null,
  );
}
