import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import { CorruptEntryError, SessionStoreUsageError } from "../errors.js";
import { describeSession, type SessionOverview } from "../log/session-head.js";
import type { SegmentRef, Store } from "../store/store.js";

/** The committed entries of a segment before its first corrupt line (all of them when none is). */
export async function entriesBeforeCorruption<TItem = MinimalItem>(
  store: Store<TItem>,
  ref: SegmentRef,
): Promise<Entry<TItem>[]> {
  const entries: Entry<TItem>[] = [];
  try {
    // A store hands out every entry before a corrupt one, then fails.
    for await (const batch of store.readFrom(ref, 0)) entries.push(...batch);
  } catch (error) {
    if (!CorruptEntryError.isInstance(error)) throw error;
  }
  return entries;
}

/** Which segments a `readingBeforeCorruption` view cuts short: when read, and when described. */
interface Cuts {
  reads: Set<string>;
  describes: Set<string>;
}

/**
 * A store that reads the segments in `cut.reads` only up to their first corrupt line (and
 * describes those in `cut.describes` by that prefix), so a fork can be cut from the turns before
 * the damage. Writes go to the real store.
 */
function readingBeforeCorruption<TItem>(store: Store<TItem>, cut: Cuts): Store<TItem> {
  const prefix = (ref: SegmentRef) => entriesBeforeCorruption(store, ref);
  return new Proxy(store, {
    get(target, property, receiver) {
      const real = Reflect.get(target, property, receiver);
      if (typeof real !== "function") return real;
      if (property === "readAll") {
        return (ref: SegmentRef) => (cut.reads.has(ref.segmentId) ? each(prefix(ref)) : target.readAll(ref));
      }
      if (property === "readFrom") {
        return (ref: SegmentRef, from: number) =>
          cut.reads.has(ref.segmentId) ? batchFrom(prefix(ref), from) : target.readFrom(ref, from);
      }
      if (property === "describeSegment") {
        return async (ref: SegmentRef) => {
          if (!cut.describes.has(ref.segmentId)) return target.describeSegment(ref);
          const entries = await prefix(ref);
          const [start, last] = [entries[0], entries.at(-1)];
          if (start?.kind !== "segment_start" || last === undefined) {
            throw new SessionStoreUsageError(
              `segment ${ref.segmentId} has no intact entry before its corrupt line; nothing to continue from`,
            );
          }
          return { start, last, entryCount: entries.length };
        };
      }
      return real.bind(target);
    },
  });
}

async function* each<TItem>(entries: Promise<Entry<TItem>[]>): AsyncIterable<Entry<TItem>> {
  yield* await entries;
}

async function* batchFrom<TItem>(
  entries: Promise<Entry<TItem>[]>,
  from: number,
): AsyncIterable<readonly Entry<TItem>[]> {
  const batch = (await entries).slice(from);
  if (batch.length > 0) yield batch;
}

/**
 * The session as far as it is intact: a view of `store` in which every segment with a corrupt
 * line ends before it, and the overview (head, branches) of that view. A fork cut from it holds
 * the turns before the damage.
 */
export async function intactView<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<{ store: Store<TItem>; overview: SessionOverview }> {
  const cut: Cuts = { reads: new Set(), describes: new Set() };
  const view = readingBeforeCorruption(store, cut);
  for (;;) {
    try {
      const overview = await describeSession(view, sessionId);
      // The head is chosen by its last intact entry; its damage may lie before that line.
      cut.reads.add(overview.head.segmentId);
      return { store: view, overview };
    } catch (error) {
      // A segment whose last line is damaged cannot be described: describe it by its intact part.
      if (!CorruptEntryError.isInstance(error)) throw error;
      const segmentId = await segmentOfFile(store, sessionId, error.file);
      if (segmentId === undefined || cut.describes.has(segmentId)) throw error;
      cut.describes.add(segmentId);
      cut.reads.add(segmentId);
    }
  }
}

/** The segment of `sessionId` a store's error names (a file path, or `postgres:<schema>/<session>/<segment>`). */
export async function segmentOfFile<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
  file: string,
): Promise<string | undefined> {
  const segments = await store.listSegments(sessionId);
  return segments.find((segmentId) => file.includes(segmentId));
}
