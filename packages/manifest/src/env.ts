import { statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** Injectable environment for path discovery (tests never touch the real home). */
export interface PodkitEnv {
  /** Absolute working directory; relative paths given on the command line resolve against it. */
  cwd: string;
  /** The user's home directory. */
  home: string;
  /** Environment variables (only `XDG_CONFIG_HOME` is read here). */
  env: Record<string, string | undefined>;
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
 * The workspace: the nearest ancestor of `e.cwd` (inclusive) that holds a `.podkit/` directory,
 * else `e.cwd` itself. Always absolute.
 */
export function findWorkspace(e: PodkitEnv): string {
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

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
