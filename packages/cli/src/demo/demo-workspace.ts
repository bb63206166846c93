import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PodkitCliError } from "../errors.js";

/** The package's copy of the repository's `examples/demo/workspace` (copied at build time). */
export function exampleWorkspace(): string {
  const dir = fileURLToPath(new URL("./workspace", import.meta.url));
  if (!existsSync(join(dir, ".podkit", "manifest.toml"))) {
    throw new PodkitCliError(`the demo workspace is missing from this installation (${dir})`, {
      hint: "reinstall @podkit/cli, or in a clone of the podkit repository run `pnpm build` (it copies examples/demo/workspace)",
    });
  }
  return dir;
}

/** Copies the example workspace to `dir` (which must not exist or be empty), else to a new temp dir. */
export async function scratchCopy(dir: string | undefined, cwd: string): Promise<string> {
  const target = dir === undefined ? await mkdtemp(join(tmpdir(), "podkit-demo-")) : resolve(cwd, dir);
  if (dir !== undefined && existsSync(target) && (await readdir(target)).length > 0) {
    throw new PodkitCliError(`${target} already exists and is not empty`, {
      hint: "pass --dir a new directory (the demo writes a workspace there), or leave --dir out for a temp one",
    });
  }
  await cp(exampleWorkspace(), target, { recursive: true });
  return target;
}
