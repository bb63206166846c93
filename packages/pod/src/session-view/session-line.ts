import type { Item } from "@podkit/llm-worker";
import type { Entry, SegmentInfo, SessionOverview, Store } from "@podkit/session-store";
import { type SegmentSummaryText, summarizeEntries } from "./session-summary.js";

/** One segment of the session's line of work, with what it records. */
export interface ShownSegment extends SegmentSummaryText {
  info: SegmentInfo;
}

/**
 * The segments a session's line of work runs through: the compacted ones (oldest first), then the
 * head — what a restore continues — each with its turns and usage. Other live branches are listed
 * in the overview, not walked. This is `podkit session show --json` and `GET /sessions/:id`.
 * A corrupt line fails with the store's `CorruptEntryError`.
 */
export async function readSessionLine(
  store: Store<Item>,
  overview: SessionOverview,
): Promise<ShownSegment[]> {
  const line = [...overview.compacted].sort((a, b) => a.startedAt - b.startedAt);
  line.push(overview.head);
  const shown: ShownSegment[] = [];
  for (const info of line) {
    const entries: Entry<Item>[] = [];
    for await (const entry of store.readAll({ sessionId: overview.sessionId, segmentId: info.segmentId })) {
      entries.push(entry);
    }
    shown.push({ info, ...summarizeEntries(entries) });
  }
  return shown;
}
