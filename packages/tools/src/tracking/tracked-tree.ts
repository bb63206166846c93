import { realpath } from "node:fs/promises";
import type { Scope } from "@podkit/manifest";
import type { PodkitFiles } from "../containment/podkit-files.js";
import { isInside } from "../sandbox/bwrap/mount-plan.js";

/**
 * What file tracking looks at (docs/rewind.md, "What is tracked"): the scope's writable targets
 * — the sandbox's writable roots — as far as they lie inside the workspace, and below them only
 * regular files the scope lets the pod write, outside podkit's own directories and outside `.git`.
 * Every path is canonical (the scope's form); a file-change entry names it relative to the
 * workspace.
 */
export class TrackedTree {
  private constructor(
    /** The workspace, canonical. */
    readonly workspace: string,
    /** Canonical directories (or files) to scan, none inside another. */
    readonly roots: readonly string[],
    private readonly scope: Scope,
    private readonly podkitFiles: PodkitFiles,
    /** Directories some rule or podkit path names an entry of: their files are decided one by one. */
    private readonly namedIn: ReadonlySet<string>,
  ) {}

  static async of(scope: Scope, workspace: string, podkitFiles: PodkitFiles): Promise<TrackedTree> {
    const canonical = await realpath(workspace).catch(() => workspace);
    const clipped = scope.writable.flatMap((target) => {
      if (isInside(target, canonical)) return [target];
      if (isInside(canonical, target)) return [canonical];
      return []; // a writable place outside the workspace: not tracked (documented)
    });
    const roots = [...new Set(clipped)].filter(
      (root, _, all) => !all.some((other) => other !== root && isInside(root, other)),
    );
    const named = [...scope.allow, ...scope.deny].map((rule) => rule.target).concat(podkitFiles.paths);
    const namedIn = new Set(named.map((path) => path.slice(0, Math.max(0, path.lastIndexOf("/"))) || "/"));
    return new TrackedTree(canonical, roots, scope, podkitFiles, namedIn);
  }

  /** The path of canonical `path` relative to the workspace (POSIX), undefined outside it. */
  relative(path: string): string | undefined {
    if (!path.startsWith(`${this.workspace}/`)) return undefined;
    return path.slice(this.workspace.length + 1);
  }

  /**
   * How the files directly in the canonical directory `dir` are tracked: `all` or `none` when one
   * decision holds for every name in it (no rule names an entry of it), else `each` by `tracks`.
   * A scan asks once per directory instead of once per file.
   */
  filesIn(dir: string): "all" | "none" | "each" {
    if (this.namedIn.has(dir)) return "each";
    // A NUL never occurs in a real name: the stand-in for any file directly in `dir`.
    return this.tracks(`${dir === "/" ? "" : dir}/\0`, "\0") ? "all" : "none";
  }

  /** Whether a scan descends into the canonical directory `dir` (named `name`). */
  descends(dir: string, name: string): boolean {
    return name !== ".git" && !this.podkitFiles.contains(dir);
  }

  /**
   * Whether the canonical file `path` (named `name`) is tracked: the scope grants write there
   * (so it is readable, and nothing it denies is ever read into the blobs), it is not one of
   * podkit's own files, and it is inside the workspace.
   */
  tracks(path: string, name: string): boolean {
    return (
      name !== ".git" &&
      this.relative(path) !== undefined &&
      this.scope.permissionAtCanonical(path) === "write" &&
      !this.podkitFiles.contains(path)
    );
  }

  /** Whether a workspace-relative path lies in the tree (a `git status` line, say). */
  tracksRelative(rel: string): boolean {
    const parts = rel.split("/");
    if (parts.includes(".git")) return false;
    const path = `${this.workspace}/${rel}`;
    return this.roots.some((root) => isInside(path, root)) && this.tracks(path, parts.at(-1) ?? "");
  }
}
