import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { Scope } from "@podkit/manifest";
import ignoreModule, { type Ignore } from "ignore";
import { readSmallFileChecked } from "./checked-open.js";

// A CommonJS module whose function is also its own `default`; this form type-checks under NodeNext.
const ignore = ignoreModule.default;

/** A regular file found by `walkTree`, with its canonical path and its path relative to the walk root. */
export interface WalkedFile {
  path: string;
  rel: string;
}

/** One directory's regular files, in name order. */
export interface WalkedDirectory {
  /** The directory's canonical path. */
  dir: string;
  files: WalkedFile[];
}

export interface WalkOptions {
  scope: Scope;
  /** The workspace: `.gitignore` files from here down to the root apply. */
  stopAt: string;
  signal?: AbortSignal;
  /** A directory below the root that could not be listed (its errno code); the walk goes on without it. */
  onUnreadable?: (dir: string, code: string) => void;
}

interface IgnoreLayer {
  /** The directory whose `.gitignore` this is. */
  base: string;
  rules: Ignore;
}

type Listing = Dirent[] | NodeJS.ErrnoException;

interface Pending {
  dir: string;
  rel: string;
  layers: IgnoreLayer[];
  /** Started ahead of time by `prefetch`; settles to the entries or the error. */
  listing?: Promise<Listing>;
}

/**
 * Directory listings in flight ahead of the walk: the thread pool lists the next directories
 * while the caller reads the files of this one. Four is libuv's default pool size; more would
 * only queue.
 */
const LOOKAHEAD = 4;

/**
 * Lists the regular files under `root` (a canonical directory the scope lets the model read),
 * one directory per batch, depth-first in name order. Symlinks are not followed (so every path
 * stays canonical and nothing outside the tree is reached through one), `.git` is skipped, and
 * `.gitignore` files are honoured from `stopAt` (the workspace) down, matched by the `ignore`
 * package, git's own rule set. Subtrees a deny rule closes are pruned unless an allow rule
 * re-opens something deeper. Up to `LOOKAHEAD` directories next in line are listed ahead.
 * Throws the error when `root` itself cannot be listed; any other directory that cannot be is
 * reported to `onUnreadable` and left out.
 */
export async function* walkTree(root: string, options: WalkOptions): AsyncGenerator<WalkedDirectory> {
  const { scope } = options;
  const layers: IgnoreLayer[] = [];
  // .gitignore files between the workspace and the walk root apply too, as in git.
  if (root === options.stopAt || root.startsWith(options.stopAt + sep)) {
    const chain = relative(options.stopAt, root).split(sep).filter(Boolean);
    let dir = options.stopAt;
    for (let i = 0; i <= chain.length; i++) {
      const layer = loadIgnore(dir, scope);
      if (layer) layers.push(layer);
      if (i < chain.length) dir = join(dir, chain[i] as string);
    }
  } else {
    const layer = loadIgnore(root, scope);
    if (layer) layers.push(layer);
  }

  // The top of the stack is visited next, so that is where listings are started ahead.
  const stack: Pending[] = [{ dir: root, rel: "", layers }];
  while (stack.length > 0) {
    options.signal?.throwIfAborted();
    prefetch(stack);
    const { dir, rel: dirRel, layers: inherited, listing } = stack.pop() as Pending;
    const entries = await (listing as Promise<Listing>);
    if (!Array.isArray(entries)) {
      // The root itself is what the caller asked for: its failure is theirs to report.
      if (dir === root) throw entries;
      options.onUnreadable?.(dir, entries.code ?? "EIO");
      continue;
    }
    let active = inherited;
    if (dir !== root && entries.some((e) => e.name === ".gitignore" && e.isFile())) {
      const layer = loadIgnore(dir, scope);
      if (layer) active = [...inherited, layer];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: Pending[] = [];
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
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] as Pending);
    prefetch(stack);
    if (files.length > 0) yield { dir, files };
  }
}

/** Starts the listings of the next `LOOKAHEAD` directories the walk will visit. */
function prefetch(stack: Pending[]): void {
  for (let i = stack.length - 1; i >= 0 && i >= stack.length - LOOKAHEAD; i--) {
    const pending = stack[i] as Pending;
    pending.listing ??= readdir(pending.dir, { withFileTypes: true }).catch(
      (error: NodeJS.ErrnoException) => error,
    );
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

function loadIgnore(dir: string, scope: Scope): IgnoreLayer | undefined {
  const file = join(dir, ".gitignore");
  if (scope.permissionAtCanonical(file) === null) return undefined;
  // Read like any other file: a .gitignore that is a symlink out of the tree is not followed.
  const bytes = readSmallFileChecked(file, 1024 * 1024, { buffer: Buffer.allocUnsafe(4096) });
  return typeof bytes === "string" ? undefined : { base: dir, rules: ignore().add(bytes.toString("utf8")) };
}

/** True when an allow rule targets something strictly below `dir` (a deny above it may not cover it). */
function reopensBelow(scope: Scope, dir: string): boolean {
  return scope.allow.some(
    (rule) => rule.target.startsWith(dir + sep) && scope.permissionAtCanonical(rule.target) !== null,
  );
}
