import {
  type Entry,
  FORMAT_VERSION,
  type Lineage,
  type ParentLink,
  type SegmentStartEntry,
} from "../entry/entry-schema.js";
import { historySourcesToEntry } from "../replay/replay.js";
import type { HistorySource } from "../replay/session-state.js";

/** What a new segment starts from. */
export interface SegmentHead<TItem> {
  sessionId: string;
  segmentId: string;
  systemPrompt: string | null;
  config: Record<string, unknown>;
  history: TItem[];
  historySources?: readonly HistorySource[];
  forkedFrom?: Lineage;
  compactedFrom?: Lineage;
  /** A child session's link to its parent; every segment of the session carries it. */
  parent?: ParentLink;
}

/** The `segment_start` entry of a new segment (format version `v` included). */
export function segmentStart<TItem>(head: SegmentHead<TItem>, ts: number): SegmentStartEntry<TItem> {
  const entry: SegmentStartEntry<TItem> = {
    kind: "segment_start",
    ts,
    v: FORMAT_VERSION,
    session_id: head.sessionId,
    segment_id: head.segmentId,
    system_prompt: head.systemPrompt,
    config: head.config,
    history: head.history,
  };
  if (head.forkedFrom !== undefined) entry.forked_from = head.forkedFrom;
  if (head.compactedFrom !== undefined) entry.compacted_from = head.compactedFrom;
  if (head.parent !== undefined) entry.parent = head.parent;
  if (head.historySources !== undefined && head.historySources.length > 0) {
    entry.history_sources = historySourcesToEntry(head.historySources);
  }
  return entry;
}

/** Collects a segment's entries into an array (for cuts that need random access). */
export async function collect<TItem>(entries: AsyncIterable<Entry<TItem>>, limit = Number.POSITIVE_INFINITY) {
  const out: Entry<TItem>[] = [];
  if (limit <= 0) return out;
  for await (const entry of entries) {
    out.push(entry);
    if (out.length >= limit) break;
  }
  return out;
}
