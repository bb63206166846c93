import { readdir, stat, unlink } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { v7 as uuidv7 } from "uuid";
import type { MemoryPaths } from "../records/layout.js";
import { writeFileAtomic } from "../store/atomic-write.js";
import { podkitRoot, readContained } from "../store/contained-read.js";
import { type StagingEntry, StagingEntrySchema } from "./extract-schema.js";

/** The most one staging file may hold (16 MiB); staging is what the extract worker wrote. */
const STAGING_MAX_BYTES = 16 * 1024 * 1024;

const label = (paths: MemoryPaths, file: string) => relative(paths.workspace, file).split(sep).join("/");

/** A staging file on disk. */
export interface StagingFile {
  readonly id: string;
  readonly file: string;
  readonly bytes: number;
}

/** Writes one staging entry as `_staging/<uuidv7>.json` (atomically); returns its id. */
export async function writeStagingEntry(
  paths: MemoryPaths,
  entry: Omit<StagingEntry, "id">,
): Promise<StagingEntry> {
  const id = uuidv7();
  const full = { id, ...entry };
  await writeFileAtomic(join(paths.stagingDir, `${id}.json`), `${JSON.stringify(full, null, 2)}\n`);
  return full;
}

/** Staging files in id (creation) order. */
export async function listStaging(paths: MemoryPaths): Promise<StagingFile[]> {
  const names = await readdir(paths.stagingDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as string[];
    throw error;
  });
  const files = names.filter((n) => n.endsWith(".json") && !n.startsWith(".")).sort();
  return Promise.all(
    files.map(async (name) => {
      const file = join(paths.stagingDir, name);
      return { id: name.slice(0, -5), file, bytes: (await stat(file)).size };
    }),
  );
}

/** Reads and validates staging files; an unreadable one is reported, not consumed. */
export async function readStaging(
  paths: MemoryPaths,
  files: readonly StagingFile[],
): Promise<{ entries: StagingEntry[]; invalid: { file: string; problem: string }[] }> {
  const entries: StagingEntry[] = [];
  const invalid: { file: string; problem: string }[] = [];
  const root = await podkitRoot(paths.workspace);
  for (const file of files) {
    try {
      const read = await readContained(file.file, root, label(paths, file.file), STAGING_MAX_BYTES);
      if (read === undefined) throw new Error("the file disappeared");
      if (!read.ok) throw new Error(read.problem);
      const parsed = StagingEntrySchema.safeParse(JSON.parse(read.text));
      if (parsed.success) entries.push(parsed.data);
      else invalid.push({ file: file.file, problem: parsed.error.issues.map((i) => i.message).join("; ") });
    } catch (error) {
      invalid.push({ file: file.file, problem: (error as Error).message });
    }
  }
  return { entries, invalid };
}

/** Deletes the staging files of `ids` (only those). */
export async function deleteStaging(paths: MemoryPaths, ids: readonly string[]): Promise<void> {
  for (const id of ids) await unlink(join(paths.stagingDir, `${id}.json`)).catch(() => undefined);
}
