import { v7 as uuidv7 } from "uuid";
import type { MemoryPaths } from "../records/layout.js";
import { withContainedDir, withExistingDir } from "../store/contained-dir.js";
import { type StagingEntry, StagingEntrySchema } from "./extract-schema.js";

/** The most one staging file may hold (16 MiB); staging is what the extract worker wrote. */
const STAGING_MAX_BYTES = 16 * 1024 * 1024;

/** A staging file on disk. */
export interface StagingFile {
  readonly id: string;
  readonly file: string;
  readonly bytes: number;
}

const STAGING_NAME = /^[0-9A-Za-z][0-9A-Za-z_-]{0,127}\.json$/;

/** Writes one staging entry as `_staging/<id>.json` (atomically, inside `.podkit` only); returns it. */
export async function writeStagingEntry(
  paths: MemoryPaths,
  entry: Omit<StagingEntry, "id">,
  id: string = uuidv7(),
): Promise<StagingEntry> {
  const full = { id, ...entry };
  await withContainedDir(paths.workspace, paths.stagingDir, (dir) =>
    dir.writeAtomic(`${id}.json`, `${JSON.stringify(full, null, 2)}\n`),
  );
  return full;
}

/** Staging files in id (creation) order; names that are not staging ids are not staging files. */
export async function listStaging(paths: MemoryPaths): Promise<StagingFile[]> {
  const listed = await withExistingDir(paths.workspace, paths.stagingDir, async (dir) => {
    const names = (await dir.list()).filter((n) => STAGING_NAME.test(n)).sort();
    const files: StagingFile[] = [];
    for (const name of names) {
      const stats = await dir.stat(name);
      if (stats !== undefined)
        files.push({ id: name.slice(0, -5), file: `${paths.stagingDir}/${name}`, bytes: stats.size });
    }
    return files;
  });
  return listed ?? [];
}

/** Whether the staging file `id` is still there. */
export async function stagingExists(paths: MemoryPaths, id: string): Promise<boolean> {
  const stats = await withExistingDir(paths.workspace, paths.stagingDir, (dir) => dir.stat(`${id}.json`));
  return stats !== undefined;
}

/** Reads and validates staging files (plain files inside `.podkit` only); an unreadable one is reported, not consumed. */
export async function readStaging(
  paths: MemoryPaths,
  files: readonly StagingFile[],
): Promise<{ entries: StagingEntry[]; invalid: { file: string; problem: string }[] }> {
  const entries: StagingEntry[] = [];
  const invalid: { file: string; problem: string }[] = [];
  for (const file of files) {
    try {
      const bytes = await withExistingDir(paths.workspace, paths.stagingDir, (dir) =>
        dir.read(`${file.id}.json`, STAGING_MAX_BYTES),
      );
      if (bytes === undefined) throw new Error("the file disappeared");
      const parsed = StagingEntrySchema.safeParse(JSON.parse(bytes.toString("utf8")));
      if (!parsed.success)
        invalid.push({ file: file.file, problem: parsed.error.issues.map((i) => i.message).join("; ") });
      else if (parsed.data.id !== file.id)
        invalid.push({ file: file.file, problem: `its id "${parsed.data.id}" is not its file name` });
      else entries.push(parsed.data);
    } catch (error) {
      invalid.push({ file: file.file, problem: (error as Error).message });
    }
  }
  return { entries, invalid };
}

/** Deletes the staging files of `ids` (only those). */
export async function deleteStaging(paths: MemoryPaths, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await withExistingDir(paths.workspace, paths.stagingDir, async (dir) => {
    for (const id of ids) await dir.remove(`${id}.json`);
  });
}
