import { basename, dirname } from "node:path";
import { withContainedDir, withExistingDir } from "./contained-dir.js";

/** The most a memory log (usage, audit, consumed) may hold before it is refused instead of read (64 MiB). */
export const LOG_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Appends one JSON record as a line to `file` under `<workspace>/.podkit` (one small write; the
 * newline commits it). The log's directory must resolve inside `.podkit` and the log be a plain
 * file (`MemoryFileRefusedError` otherwise): nothing is ever appended through a link.
 */
export async function appendJsonLine(workspace: string, file: string, record: unknown): Promise<void> {
  await withContainedDir(workspace, dirname(file), (dir) =>
    dir.append(basename(file), `${JSON.stringify(record)}\n`),
  );
}

/**
 * Every complete line of a JSONL log that parses, read only inside `.podkit` and never through a
 * link; a torn last line is not a record yet.
 */
export async function readJsonLines(workspace: string, file: string): Promise<unknown[]> {
  const bytes = await withExistingDir(workspace, dirname(file), (dir) =>
    dir.read(basename(file), LOG_MAX_BYTES),
  );
  if (bytes === undefined) return [];
  const lines = bytes.toString("utf8").split("\n");
  lines.pop();
  const out: unknown[] = [];
  for (const line of lines) {
    if (line.trim() === "") continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // A log for people and reports: one damaged line must not hide the rest.
    }
  }
  return out;
}
