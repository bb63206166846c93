import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RecordingError } from "./errors.js";

/**
 * Reads a recorded stream (`*.chunks.txt`: one SSE payload per line, as the provider sent it) into the
 * `chunks` of a scripted response. Blank lines are skipped.
 */
export function loadRecordedChunks(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new RecordingError(file, cause);
  }
  return text.split(/\r?\n/).filter((line) => line.trim().length > 0);
}

/**
 * The provider recordings shipped with this package (`<wire>/<name>.chunks.txt`): real streams from
 * Anthropic, OpenAI (Chat and Responses) and Gemini, taken from the Vercel AI SDK's test fixtures
 * (Apache-2.0). Resolves the same from `src/` and from the built `dist/`.
 */
export const RECORDINGS_DIR: string = fileURLToPath(new URL("../recordings/", import.meta.url));
