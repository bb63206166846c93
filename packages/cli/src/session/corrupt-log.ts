import type { Item } from "@podkit/llm-worker";
import { entriesBeforeCorruption } from "@podkit/pod";
import {
  type CorruptEntryError,
  type Entry,
  replay,
  type SegmentRef,
  type Store,
} from "@podkit/session-store";
import { PodkitCliError } from "../errors.js";

/**
 * A store that reads `segmentId` only up to its first corrupt line, so a fork can be cut from the
 * turns before it. Writes go to the real store; only reads of that one segment are cut short.
 */
export function readingBeforeCorruption(store: Store<Item>, segmentId: string): Store<Item> {
  return new Proxy(store, {
    get(target, property, receiver) {
      // Without readBatches, every reader of this store goes through the cut-short readAll.
      if (property === "readBatches") return undefined;
      if (property !== "readAll") return Reflect.get(target, property, receiver);
      return (ref: SegmentRef) =>
        ref.segmentId === segmentId ? yieldAll(entriesBeforeCorruption(target, ref)) : target.readAll(ref);
    },
  });
}

async function* yieldAll(entries: Promise<Entry<Item>[]>): AsyncIterable<Entry<Item>> {
  yield* await entries;
}

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

async function segmentOfFile(
  store: Store<Item>,
  sessionId: string,
  file: string,
): Promise<string | undefined> {
  const segments = await store.listSegments(sessionId);
  return segments.find((segmentId) => file.includes(segmentId));
}
