import type { MinimalItem } from "../entry/entry-schema.js";
import { NotFoundError } from "../errors.js";
import type { LineageRef } from "../replay/session-state.js";
import type { SegmentSummary, Store } from "../store/store.js";

/** One segment of a session as `podkit session show` lists it. */
export interface SegmentInfo {
  segmentId: string;
  /** Committed entries, `segment_start` included. */
  entryCount: number;
  /** `ts` of its `segment_start` and of its last committed entry (epoch ms). */
  startedAt: number;
  lastEntryAt: number;
  forkedFrom: LineageRef | null;
  compactedFrom: LineageRef | null;
  /**
   * `head`: the segment a restore continues. `branch`: another live line of the session (a drift
   * fork, a `forkAt`, or the source a drift fork left behind). `compacted`: replaced by a
   * compaction (`compactedInto`) and not written to since.
   */
  role: "head" | "branch" | "compacted";
  compactedInto?: string;
}

/** A session's segments sorted by role: the head, the other live branches, the compacted ones. */
export interface SessionOverview {
  sessionId: string;
  head: SegmentInfo;
  /** Live segments other than the head, most recently written first. */
  otherBranches: SegmentInfo[];
  compacted: SegmentInfo[];
}

function lineage(ref: { segment_id: string; at_turn: number } | undefined): LineageRef | null {
  return ref === undefined ? null : { segmentId: ref.segment_id, atTurn: ref.at_turn };
}

/** Most recent activity first: last entry's `ts`, then the newer segment id (UUIDv7 order). */
function byActivity(a: SegmentInfo, b: SegmentInfo): number {
  if (a.lastEntryAt !== b.lastEntryAt) return b.lastEntryAt - a.lastEntryAt;
  return a.segmentId < b.segmentId ? 1 : a.segmentId > b.segmentId ? -1 : 0;
}

/**
 * Applies the head rule to a session's segments (see docs/session-store.md, "Which segment is
 * the session"):
 * 1. A segment is *compacted* when a compaction names it as `compacted_from` and nothing was
 *    written to it after that compaction started (its last entry is not newer than the
 *    compacted segment's `segment_start`). Every other segment is a live branch.
 * 2. The *head* is the live branch whose last committed entry is the newest (by `ts`, ties
 *    to the newer segment id). No live branch holds a committed entry newer than the head's,
 *    so a restore of the head never hides later work; the other branches are listed.
 */
export function applyHeadRule<TItem>(
  sessionId: string,
  summaries: ReadonlyMap<string, SegmentSummary<TItem>>,
): SessionOverview {
  const infos: SegmentInfo[] = [];
  for (const [segmentId, summary] of summaries) {
    infos.push({
      segmentId,
      entryCount: summary.entryCount,
      startedAt: summary.start.ts,
      lastEntryAt: summary.last.ts,
      forkedFrom: lineage(summary.start.forked_from),
      compactedFrom: lineage(summary.start.compacted_from),
      role: "branch",
    });
  }
  for (const info of infos) {
    const replacement = infos.find(
      (other) => other.compactedFrom?.segmentId === info.segmentId && other.startedAt >= info.lastEntryAt,
    );
    if (replacement !== undefined) {
      info.role = "compacted";
      info.compactedInto = replacement.segmentId;
    }
  }
  const live = infos.filter((info) => info.role !== "compacted").sort(byActivity);
  const head = live[0];
  if (head === undefined) {
    // Compaction chains always end in a live segment; only a cycle (hand-edited files) gets here.
    throw new NotFoundError({ what: "session", id: sessionId, where: "its store (no live segment)" });
  }
  head.role = "head";
  return {
    sessionId,
    head,
    otherBranches: live.slice(1),
    compacted: infos.filter((info) => info.role === "compacted").sort(byActivity),
  };
}

/** Lists a session's segments with their roles under the head rule; `head` is what restore continues. */
export async function describeSession<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<SessionOverview> {
  const ids = await store.listSegments(sessionId);
  if (ids.length === 0)
    throw new NotFoundError({ what: "session", id: sessionId, where: "its store (no segments)" });
  const summaries = new Map<string, SegmentSummary<TItem>>();
  for (const segmentId of ids)
    summaries.set(segmentId, await store.describeSegment({ sessionId, segmentId }));
  return applyHeadRule(sessionId, summaries);
}
