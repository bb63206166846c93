import type { Item } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";
import { EXTRACT_POINTER_DOMAIN, type ExtractPointer, ExtractPointerSchema } from "./pointer.js";

/** How an extract reads a session: the entries of one of its segments from an index on. */
export interface SegmentReader {
  /** Entries of segment `segmentId` of this session at index ≥ `from`, in order. */
  readFrom(segmentId: string, from: number): AsyncIterable<Entry<Item>>;
}

/** A segment still to extract from `from` on; `entries` when already read (an older segment). */
export interface PendingSegment {
  readonly segmentId: string;
  readonly from: number;
  readonly entries?: readonly Entry<Item>[];
}

/** Compactions followed back at most (a longer chain is extracted from this far back). */
const MAX_CHAIN = 64;

/** Every entry of `iterable`, in order. */
export async function collect(iterable: AsyncIterable<Entry<Item>>): Promise<Entry<Item>[]> {
  const out: Entry<Item>[] = [];
  for await (const entry of iterable) out.push(entry);
  return out;
}

/** The last extract pointer written in `entries`, whatever segment it names. */
function lastPointer(entries: readonly Entry<Item>[]): ExtractPointer | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry?.kind !== "extension" || entry.domain !== EXTRACT_POINTER_DOMAIN) continue;
    const parsed = ExtractPointerSchema.safeParse(entry.payload);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

const compactedFrom = (entries: readonly Entry<Item>[]) => {
  const start = entries[0];
  return start?.kind === "segment_start" ? start.compacted_from?.segment_id : undefined;
};

/**
 * What is left to extract of a session, oldest first, ending with its head segment. A pointer is
 * a position in the chain of segments compaction made (`compacted_from`): a head that has its
 * own pointer continues there; a head without one (a compaction just started it) inherits the
 * last pointer of the segment it was compacted from — the old segment is never modified, so its
 * last pointer is in its own log — and that segment's tail after it, which never reached the
 * threshold, is extracted before the head's entries. A drift fork or a forked session starts at
 * its own first entry.
 */
export async function pendingSegments(
  reader: SegmentReader,
  headSegmentId: string,
  headPointer: unknown,
): Promise<PendingSegment[]> {
  const own = ExtractPointerSchema.safeParse(headPointer);
  if (own.success && own.data.segment_id === headSegmentId) {
    return [{ segmentId: headSegmentId, from: Math.max(1, own.data.next_entry) }];
  }
  // Walk back through the compactions until a pointer says where extraction stands.
  let position: ExtractPointer | undefined = own.success ? own.data : undefined;
  const chain: { segmentId: string; entries?: Entry<Item>[] }[] = [{ segmentId: headSegmentId }];
  let previous = compactedFrom(await firstEntry(reader, headSegmentId));
  while (
    previous !== undefined &&
    chain.length <= MAX_CHAIN &&
    !chain.some((s) => s.segmentId === previous)
  ) {
    const segmentId: string = previous;
    const entries = await collect(reader.readFrom(segmentId, 0));
    chain.unshift({ segmentId, entries });
    if (position?.segment_id === segmentId) break;
    position ??= lastPointer(entries);
    if (position !== undefined && chain.some((s) => s.segmentId === position?.segment_id)) break;
    previous = compactedFrom(entries);
  }
  const at = position === undefined ? -1 : chain.findIndex((s) => s.segmentId === position?.segment_id);
  // No pointer anywhere: everything from the oldest segment reached is still to extract.
  const rest = at === -1 ? chain : chain.slice(at);
  return rest.map((segment, i) => ({
    segmentId: segment.segmentId,
    from: i === 0 && at !== -1 ? Math.max(1, position?.next_entry ?? 1) : 1,
    ...(segment.entries === undefined ? {} : { entries: segment.entries }),
  }));
}

async function firstEntry(reader: SegmentReader, segmentId: string): Promise<Entry<Item>[]> {
  for await (const entry of reader.readFrom(segmentId, 0)) return [entry];
  return [];
}
