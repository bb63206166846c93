import type { SessionOverview } from "@podkit/session-store";

/**
 * The segments a session's stream runs through, oldest first: the head and, before it, each
 * segment it continues (`compacted_from`, else `forked_from`), as far back as they exist. A
 * compaction or a drift fork starts a new segment; the stream follows it there.
 */
export function streamLine(overview: SessionOverview): string[] {
  const all = [overview.head, ...overview.otherBranches, ...overview.compacted];
  const byId = new Map(all.map((info) => [info.segmentId, info]));
  const line: string[] = [];
  for (let info = byId.get(overview.head.segmentId); info !== undefined; ) {
    if (line.includes(info.segmentId)) break; // a lineage cycle (hand-edited logs) ends the walk
    line.push(info.segmentId);
    const parent = info.compactedFrom ?? info.forkedFrom;
    info = parent === null ? undefined : byId.get(parent.segmentId);
  }
  return line.reverse();
}
