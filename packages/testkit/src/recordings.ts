import { readFileSync } from "node:fs";
import { TestkitError } from "./errors.js";

/**
 * Reads a recorded stream (`*.chunks.txt`: one SSE payload per line, as the provider sent it) into the
 * `chunks` of a scripted response. Blank lines are skipped.
 */
export function loadRecordedChunks(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new TestkitError(`cannot read recorded chunks ${file}: ${(cause as Error).message}`, { cause });
  }
  return text.split(/\r?\n/).filter((line) => line.trim().length > 0);
}
