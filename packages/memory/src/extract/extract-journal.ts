import { createHash } from "node:crypto";
import { z } from "zod";
import type { MemoryPaths } from "../records/layout.js";
import { withContainedDir, withExistingDir } from "../store/contained-dir.js";
import { readJsonLines } from "../store/jsonl-log.js";
import { stagingExists } from "./staging.js";

/**
 * `_staging/.extract-<session>.json`: an extract in progress — the slice it reads and the id its
 * staging file will have — written before the model is asked and removed once the pointer is
 * appended. A process killed in between leaves it behind, and the next extract of the session
 * knows whether the slice was staged (then only the pointer is appended: the slice is never
 * staged twice) or not (then it is extracted again: nothing is lost).
 */
export const ExtractMarkerSchema = z.object({
  session_id: z.string(),
  segment_id: z.string(),
  range: z.tuple([z.int().min(0), z.int().min(0)]),
  staging_id: z.string().regex(/^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/),
});
export type ExtractMarker = z.infer<typeof ExtractMarkerSchema>;

const markerName = (sessionId: string) =>
  `.extract-${createHash("sha256").update(sessionId).digest("hex").slice(0, 24)}.json`;

export async function writeExtractMarker(paths: MemoryPaths, marker: ExtractMarker): Promise<void> {
  await withContainedDir(paths.workspace, paths.stagingDir, (dir) =>
    dir.writeAtomic(markerName(marker.session_id), JSON.stringify(marker)),
  );
}

/** The marker an interrupted extract of `sessionId` left (an unreadable one counts as none). */
export async function readExtractMarker(
  paths: MemoryPaths,
  sessionId: string,
): Promise<ExtractMarker | undefined> {
  const bytes = await withExistingDir(paths.workspace, paths.stagingDir, (dir) =>
    dir.read(markerName(sessionId), 64 * 1024),
  );
  if (bytes === undefined) return undefined;
  try {
    const marker = ExtractMarkerSchema.parse(JSON.parse(bytes.toString("utf8")));
    return marker.session_id === sessionId ? marker : undefined;
  } catch {
    return undefined;
  }
}

export async function removeExtractMarker(paths: MemoryPaths, sessionId: string): Promise<void> {
  await withExistingDir(paths.workspace, paths.stagingDir, (dir) => dir.remove(markerName(sessionId)));
}

/** Whether the staging file `id` was written: it is still staged, or a consolidation consumed it. */
export async function wasStaged(paths: MemoryPaths, id: string): Promise<boolean> {
  if (await stagingExists(paths, id)) return true;
  for (const line of await readJsonLines(paths.workspace, paths.consumedLog)) {
    const ids = (line as { staging_ids?: unknown }).staging_ids;
    if (Array.isArray(ids) && ids.includes(id)) return true;
  }
  return false;
}
