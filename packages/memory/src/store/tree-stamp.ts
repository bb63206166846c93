import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { kindDir, type MemoryPaths, type RecordKind } from "../records/layout.js";
import { FILE_BATCH, mapInBatches } from "./loop-yield.js";
import { STAMP_NAME } from "./record-writes.js";

const hidden = (name: string) => name.startsWith(".");

/** The directories holding records of `kinds`, each with the names in it that are not records. */
function recordDirs(paths: MemoryPaths, kinds: readonly RecordKind[]): [string, (name: string) => boolean][] {
  return kinds.map((kind) => [
    kindDir(paths, kind),
    kind === "summary" ? (name: string) => hidden(name) || name.startsWith("_") : hidden,
  ]);
}

const missing = (error: unknown) =>
  ["ENOENT", "ENOTDIR"].includes((error as NodeJS.ErrnoException).code ?? "")
    ? undefined
    : Promise.reject(error);

/**
 * A cheap fingerprint of the memory trees, independent of how many records there are: the stamp
 * file every memory writer rewrites after a change, each record directory's inode and mtime
 * (which change when a file is added, removed or replaced by an atomic save), and the summary
 * file's own (the memory directory also holds staging, usage and audit). A person editing a
 * record in place changes none of them; `memoryTreeStamp` sees that.
 */
export async function quickTreeStamp(paths: MemoryPaths, kinds: readonly RecordKind[]): Promise<string> {
  const stamp = await readFile(join(paths.memoryDir, STAMP_NAME), "utf8").catch(missing);
  const watched = kinds.map((kind) => (kind === "summary" ? paths.summaryFile : kindDir(paths, kind)));
  const stats = await Promise.all(
    watched.map(async (path) => {
      const s = await stat(path).catch(missing);
      return s === undefined ? `${path}\tnone` : `${path}\t${s.ino}\t${s.size}\t${s.mtimeMs}`;
    }),
  );
  return [stamp ?? "", ...stats].join("\n");
}

async function dirStamp(dir: string, skip: (name: string) => boolean): Promise<string> {
  const names = ((await readdir(dir).catch(missing)) ?? []).filter((name) => !skip(name)).sort();
  const lines = await mapInBatches(names, FILE_BATCH, (name) =>
    stat(join(dir, name)).then(
      (s) => `${name}\t${s.size}\t${s.mtimeMs}\t${s.ino}`,
      () => `${name}\tgone`,
    ),
  );
  return `${dir}\n${lines.join("\n")}`;
}

/**
 * A full fingerprint of the memory trees: every record file's name, size, mtime and inode. Equal
 * stamps mean a loaded store is still what is on disk; staging, usage and audit do not count. It
 * costs a `stat` per record: callers sweep with it only now and then (see `cachedMemoryStore`).
 */
export async function memoryTreeStamp(paths: MemoryPaths, kinds: readonly RecordKind[]): Promise<string> {
  const parts = await Promise.all(recordDirs(paths, kinds).map(([dir, skip]) => dirStamp(dir, skip)));
  return parts.join("\n\n");
}
