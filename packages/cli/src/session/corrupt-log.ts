import type { Item } from "@podkit/llm-worker";
import {
  type CorruptEntryError,
  entriesBeforeCorruption,
  replay,
  type Store,
  segmentOfFile,
} from "@podkit/session-store";
import { PodkitCliError } from "../errors.js";

/**
 * Turns a corrupt session log into the CLI's one-line error: where the bad line is, and the
 * `session fork` command that continues from the last turn that ended before it.
 */
export async function corruptLogError(
  error: CorruptEntryError,
  store: Store<Item>,
  sessionId: string,
): Promise<PodkitCliError> {
  const segmentId = await segmentOfFile(store, sessionId, error.file);
  const good = segmentId === undefined ? [] : await entriesBeforeCorruption(store, { sessionId, segmentId });
  const turn = good.length > 0 ? replay(good).turn : 0;
  return new PodkitCliError(
    `session ${sessionId} has a corrupt log line: ${error.file}:${error.line}: ${error.reason}`,
    {
      hint: `the lines before it are intact: \`podkit session fork ${sessionId} --at-turn ${turn}\` starts a new session from turn ${turn}, the last good one (the corrupt file is left as it is)`,
      cause: error,
    },
  );
}
