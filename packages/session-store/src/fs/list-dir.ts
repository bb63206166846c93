import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { errorCode } from "./sync-fs.js";

/** Session directories or segment files of `dir`; undefined when `dir` does not exist. */
export async function listDir(dir: string, directories: boolean): Promise<string[] | undefined> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
  const ids: string[] = [];
  for (const dirent of dirents) {
    if (directories) {
      if (dirent.isDirectory() && !dirent.name.startsWith(".")) ids.push(dirent.name);
    } else if (dirent.isFile() && dirent.name.endsWith(".jsonl")) {
      ids.push(dirent.name.slice(0, -".jsonl".length));
    }
  }
  return ids;
}
