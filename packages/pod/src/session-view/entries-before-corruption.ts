import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { CorruptEntryError, type Entry, FsStore, type SegmentRef, type Store } from "@podkit/session-store";

/**
 * The committed entries of a segment before its first corrupt line (all of them when none is), so
 * a listing shows a damaged session instead of failing on it.
 */
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
  const root = await mkdtemp(join(tmpdir(), "podkit-prefix-"));
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
