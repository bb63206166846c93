import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { EvalItemResult } from "./eval-types.js";

/**
 * An eval's directory, `<evals dir>/<eval id>/`: `eval.json` (what was evaluated) and one
 * `items/<key>.json` per finished item, each written atomically (temp file, then rename), so a
 * crash leaves every file whole or absent and a rerun with the same id skips what is there.
 */
export class EvalDir {
  private constructor(readonly dir: string) {}

  static async open(evalsDir: string, evalId: string, meta: unknown): Promise<EvalDir> {
    const dir = join(evalsDir, evalId);
    await mkdir(join(dir, "items"), { recursive: true });
    await atomicWrite(join(dir, "eval.json"), meta);
    return new EvalDir(dir);
  }

  /** The items finished before, by key (files that do not parse are redone). */
  async finished<T extends { readonly key: string } = EvalItemResult>(): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    for (const file of await readdir(join(this.dir, "items"))) {
      if (!file.endsWith(".json")) continue;
      try {
        const result = JSON.parse(await readFile(join(this.dir, "items", file), "utf8")) as T;
        if (typeof result.key === "string") found.set(result.key, result);
      } catch {
        // A file that does not parse was not written by us whole: the item runs again.
      }
    }
    return found;
  }

  async write(result: { readonly key: string }): Promise<void> {
    await atomicWrite(join(this.dir, "items", `${result.key}.json`), result);
  }
}

async function atomicWrite(path: string, value: unknown): Promise<void> {
  const temp = `${path}.${randomUUID()}.tmp`;
  await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(temp, path);
}
