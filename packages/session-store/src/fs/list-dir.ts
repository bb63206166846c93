import { type Dirent, readdirSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { errorCode } from "./sync-fs.js";

/** Session directories of `root`; undefined when `root` does not exist. */
export async function listSessionDirs(root: string): Promise<string[] | undefined> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(root, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
  const ids: string[] = [];
  for (const dirent of dirents) {
    if (dirent.isDirectory() && !dirent.name.startsWith(".")) ids.push(dirent.name);
  }
  return ids;
}

/**
 * Segment ids of the session directory `dir`; undefined when `dir` does not exist. Synchronous,
 * like the store's writes: a session directory holds only its segments (one per compaction or
 * fork) and their lock files, so one `readdir` call takes microseconds (well under a millisecond
 * for a few hundred names), where the thread-pool round trip of the asynchronous call cost a
 * served turn more CPU than the listing itself (serve checks the listing before every turn of an
 * open pod).
 */
export function listSegmentFiles(dir: string): string[] | undefined {
  let dirents: Dirent[];
  try {
    dirents = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
  const ids: string[] = [];
  for (const dirent of dirents) {
    if (dirent.isFile() && dirent.name.endsWith(".jsonl")) ids.push(dirent.name.slice(0, -".jsonl".length));
  }
  return ids;
}
