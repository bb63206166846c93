import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { WorkspaceNotFoundError } from "./errors.js";

/** Injectable environment for path discovery (tests never touch the real home). */
export interface PodkitEnv {
  /** Absolute working directory; relative paths given on the command line resolve against it. */
  cwd: string;
  /** The user's home directory. */
  home: string;
  /** Environment variables (only `XDG_CONFIG_HOME` and `XDG_STATE_HOME` are read here). */
  env: Record<string, string | undefined>;
  /**
   * The workspace, when given explicitly (`podkit --workspace <dir>`, the `workspace` option of
   * `loadManifest`): relative to `cwd`, used as it is (no search), and it must be a directory.
   */
  workspace?: string;
}

/** The real process environment: `process.cwd()`, `os.homedir()`, `process.env`. */
export function defaultPodkitEnv(): PodkitEnv {
  return { cwd: process.cwd(), home: homedir(), env: process.env };
}

/**
 * The user config dir: `$XDG_CONFIG_HOME/podkit` when that variable holds an absolute path
 * (the XDG spec says relative values are to be ignored), else `<home>/.config/podkit`.
 */
export function userConfigDir(e: PodkitEnv): string {
  const xdg = e.env.XDG_CONFIG_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "podkit");
  return join(e.home, ".config", "podkit");
}

/**
 * The user state dir: `$XDG_STATE_HOME/podkit` when that variable holds an absolute path, else
 * `<home>/.local/state/podkit`. Sessions of workspaces without a `.podkit/` directory live here.
 */
export function userStateDir(e: PodkitEnv): string {
  const xdg = e.env.XDG_STATE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "podkit");
  return join(e.home, ".local", "state", "podkit");
}

/**
 * The workspace, found the way git finds a repository: `e.workspace` when given (it must be a
 * directory, else `WorkspaceNotFoundError`), else the nearest ancestor of `e.cwd` (inclusive) that
 * holds a `.podkit/` directory, else `e.cwd` itself. Always absolute. Finding it creates nothing.
 */
export function findWorkspace(e: PodkitEnv): string {
  if (e.workspace !== undefined) {
    const given = resolve(e.cwd, e.workspace);
    if (!isDirectory(given)) {
      throw new WorkspaceNotFoundError(`workspace ${given} is not a directory`, {
        hint: "pass --workspace an existing project directory (or leave it out: the nearest ancestor with .podkit/ is used)",
      });
    }
    return given;
  }
  const start = resolve(e.cwd);
  for (let dir = start; ; dir = dirname(dir)) {
    if (isDirectory(join(dir, ".podkit"))) return dir;
    if (dirname(dir) === dir) return start;
  }
}

/** `<user config dir>/manifest.toml`, the user layer of the cascade. */
export function userManifestPath(e: PodkitEnv): string {
  return join(userConfigDir(e), "manifest.toml");
}

/** `<workspace>/.podkit/manifest.toml`, the workspace layer of the cascade. */
export function workspaceManifestPath(workspace: string): string {
  return join(workspace, ".podkit", "manifest.toml");
}

/**
 * Where podkit keeps a workspace's own data (sessions): `<workspace>/.podkit` when that directory
 * exists, else `<user state dir>/workspaces/<name>-<hash of the workspace path>`, so that a command
 * run in a directory without `.podkit/` never creates one there (only `podkit init` does).
 */
export function workspaceDataDir(workspace: string, e: PodkitEnv): string {
  const own = join(workspace, ".podkit");
  if (isDirectory(own)) return own;
  const hash = createHash("sha256").update(workspace).digest("hex").slice(0, 16);
  const name =
    basename(workspace)
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .slice(0, 40) || "root";
  return join(userStateDir(e), "workspaces", `${name}-${hash}`);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
