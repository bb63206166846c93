import type { SessionOverview } from "../log/session-head.js";

/**
 * The segments a session's line of work runs through, oldest first: the head and, before it, each
 * segment it continues (`compacted_from`, else `forked_from`), as far back as they exist — the one
 * walk every reader of a session uses (`session show`, `GET /sessions/:id` and its event stream,
 * the dispatcher reading a run's progress), so they all cover the same segments. Another live
 * branch the head does not continue (a drift fork's stale side) is listed in the overview, never
 * walked. A lineage cycle (hand-edited logs) ends the walk.
 */
export function lineOf(overview: SessionOverview): string[] {
  const all = [overview.head, ...overview.otherBranches, ...overview.compacted];
  const byId = new Map(all.map((info) => [info.segmentId, info]));
  const line: string[] = [];
  for (let info = byId.get(overview.head.segmentId); info !== undefined; ) {
    if (line.includes(info.segmentId)) break;
    line.push(info.segmentId);
    const parent = info.compactedFrom ?? info.forkedFrom;
    info = parent === null ? undefined : byId.get(parent.segmentId);
  }
  return line.reverse();
}
