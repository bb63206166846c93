import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import {
  CorruptEntryError,
  type Entry,
  FsStore,
  replay,
  type SegmentRef,
  type Store,
} from "@podkit/session-store";
import { PodkitCliError } from "../errors.js";

/** The committed entries of a segment before its first corrupt line (all of them when none is). */
export async function entriesBeforeCorruption(store: Store<Item>, ref: SegmentRef): Promise<Entry<Item>[]> {
  const entries: Entry<Item>[] = [];
  try {
    for await (const entry of store.readAll(ref)) entries.push(entry);
  } catch (error) {
    if (!CorruptEntryError.isInstance(error)) throw error;
    // A store may reject a whole read chunk for one bad line; the lines before it are read again
    // from a copy that ends before the bad line, by the same reader.
    if (entries.length < error.line - 1) return linesBefore(error, ref);
  }
  return entries;
}

/** The entries of lines 1 … `error.line - 1` of the segment file the error names. */
async function linesBefore(error: CorruptEntryError, ref: SegmentRef): Promise<Entry<Item>[]> {
  const bytes = await readFile(error.file).catch(() => undefined);
  if (bytes === undefined) return [];
  let end = 0;
  for (let line = 1; line < error.line; line++) end = bytes.indexOf(0x0a, end) + 1;
  const root = await mkdtemp(join(tmpdir(), "podkit-cli-prefix-"));
  try {
    await mkdir(join(root, ref.sessionId));
    await writeFile(join(root, ref.sessionId, basename(error.file)), bytes.subarray(0, end));
    const copy = new FsStore<Item>({ root });
    const entries: Entry<Item>[] = [];
    for await (const entry of copy.readAll(ref)) entries.push(entry);
    await copy.close();
    return entries;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

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
