import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { kindDir, type MemoryPaths } from "../records/layout.js";
import { FILE_BATCH, mapInBatches } from "./loop-yield.js";

async function dirStamp(dir: string, skip: (name: string) => boolean): Promise<string> {
  const names = (
    await readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ENOTDIR") return [] as string[];
      throw error;
    })
  )
    .filter((name) => !skip(name))
    .sort();
  const lines = await mapInBatches(names, FILE_BATCH, (name) =>
    stat(join(dir, name)).then(
      (s) => `${name}\t${s.size}\t${s.mtimeMs}\t${s.ino}`,
      () => `${name}\tgone`,
    ),
  );
  return `${dir}\n${lines.join("\n")}`;
}

/**
 * A fingerprint of the memory trees: every record file's name, size, mtime and inode (an atomic
 * write makes a new inode). Equal stamps mean a loaded store is still what is on disk; the
 * staging, usage and audit areas are not part of it.
 */
export async function memoryTreeStamp(paths: MemoryPaths): Promise<string> {
  const hidden = (name: string) => name.startsWith(".");
  const parts = await Promise.all([
    dirStamp(kindDir(paths, "decision"), hidden),
    dirStamp(kindDir(paths, "request"), hidden),
    dirStamp(kindDir(paths, "knowledge"), hidden),
    dirStamp(paths.memoryDir, (name) => hidden(name) || name.startsWith("_")),
  ]);
  return parts.join("\n\n");
}
