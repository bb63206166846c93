import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { PodkitEnv } from "../src/env.js";

/** A real temporary directory (canonical path) with a fake home inside it. */
export interface TempRoot {
  root: string;
  home: string;
  /** `PodkitEnv` with cwd = `root/<cwd>` (default `root`), home inside the root, no XDG variable. */
  env(cwd?: string, vars?: Record<string, string>): PodkitEnv;
  /** Writes `content` to `root/<rel>`, creating parent directories; returns the absolute path. */
  write(rel: string, content: string | Uint8Array): Promise<string>;
  /** Creates `root/<rel>` as a directory; returns the absolute path. */
  mkdir(rel: string): Promise<string>;
  path(rel: string): string;
  cleanup(): Promise<void>;
}

export async function makeTempRoot(): Promise<TempRoot> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "podkit-manifest-")));
  const home = join(root, "home");
  await mkdir(home);
  return {
    root,
    home,
    env: (cwd = ".", vars = {}) => ({ cwd: join(root, cwd), home, env: { ...vars } }),
    async write(rel, content) {
      const file = join(root, rel);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
      return file;
    },
    async mkdir(rel) {
      const dir = join(root, rel);
      await mkdir(dir, { recursive: true });
      return dir;
    },
    path: (rel) => join(root, rel),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
