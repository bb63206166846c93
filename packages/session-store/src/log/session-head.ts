import type { Entry, MinimalItem } from "../entry/entry-schema.js";
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
  /**
   * A drift fork whose source line completed a run its writer never saw: that line (this segment
   * of it, the newest to do so) is what happened, so this branch is never the head (rule 2).
   */
  supersededBy?: string;
}

/**
 * What the head rule reads of a segment beyond its summary, only where a drift fork competes with
 * the line it split from (`describeSession` gathers it; see rule 2 of `applyHeadRule`).
 */
export interface SegmentFacts {
  /**
   * For a segment that split off its source carrying entries (a drift fork carries the source's
   * state — usage, extensions, the last run end, the open turn — verbatim): the newest `ts` among
   * them, how far its writer had seen the source. Absent for a branch started on purpose
   * (`forkAt`) or a compaction: they carry nothing.
   */
  readonly carriedUpTo?: number;
  /** The `ts` of the segment's newest `run_completed` (absent: it has none). */
  readonly lastRunCompletedAt?: number;
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

/** True when `info` is segment `source` or continues it through compactions. */
function continuesLine(info: SegmentInfo, source: string, byId: ReadonlyMap<string, SegmentInfo>): boolean {
  const seen = new Set<string>();
  for (let at: SegmentInfo | undefined = info; at !== undefined && !seen.has(at.segmentId); ) {
    if (at.segmentId === source) return true;
    seen.add(at.segmentId);
    const from: string | undefined = at.compactedFrom?.segmentId;
    at = from === undefined ? undefined : byId.get(from);
  }
  return false;
}

/**
 * Applies the head rule to a session's segments (see docs/session-store.md, "Which segment is
 * the session"):
 * 1. A segment is *compacted* when a compaction names it as `compacted_from` and nothing was
 *    written to it after that compaction started (its last entry is not newer than the
 *    compacted segment's `segment_start`). Every other segment is a live branch.
 * 2. A drift fork is *superseded* when its source line — the source, or a compaction that
 *    continues it — holds a live segment that completed a run after everything the fork's writer
 *    had seen of the source (`SegmentFacts`): the fork's writer was stale, and whatever it wrote
 *    afterwards — even a whole turn without tools — is not what happened.
 * 3. The *head* is the live branch, not superseded, whose last committed entry is the newest (by
 *    `ts`, ties to the newer segment id). Which write came last decides only between lines that
 *    do not contradict each other; the other branches are listed.
 * Without `facts` (none gathered) rule 2 finds nothing.
 */
export function applyHeadRule<TItem>(
  sessionId: string,
  summaries: ReadonlyMap<string, SegmentSummary<TItem>>,
  facts: ReadonlyMap<string, SegmentFacts> = new Map(),
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
  const byId = new Map(infos.map((info) => [info.segmentId, info]));
  for (const fork of live) {
    const carriedUpTo = facts.get(fork.segmentId)?.carriedUpTo;
    const source = fork.forkedFrom?.segmentId;
    if (carriedUpTo === undefined || source === undefined) continue;
    // `live` is newest first: the first line segment found is the newest to supersede the fork.
    const superseding = live.find((other) => {
      if (other === fork || !continuesLine(other, source, byId)) return false;
      const completed = facts.get(other.segmentId)?.lastRunCompletedAt;
      return completed !== undefined && completed > carriedUpTo;
    });
    if (superseding !== undefined) fork.supersededBy = superseding.segmentId;
  }
  // Only a cycle of superseding lines (hand-edited files) leaves no candidate: then the newest.
  const head = live.find((info) => info.supersededBy === undefined) ?? live[0];
  if (head === undefined) {
    // Compaction chains always end in a live segment; only a cycle (hand-edited files) gets here.
    throw new NotFoundError({ what: "session", id: sessionId, where: "its store (no live segment)" });
  }
  head.role = "head";
  return {
    sessionId,
    head,
    otherBranches: live.filter((info) => info !== head),
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
  return applyHeadRule(sessionId, summaries, await gatherFacts(store, sessionId, summaries));
}

/**
 * The facts rule 2 needs, read only where it can apply: for each segment forked from another of
 * the session while carrying entries, how far its writer had seen the source (the newest source
 * entry it carries); for the segments of that source's line written after that, their newest
 * `run_completed`. A session without drift forks (nearly all) reads nothing beyond the summaries.
 */
async function gatherFacts<TItem>(
  store: Store<TItem>,
  sessionId: string,
  summaries: ReadonlyMap<string, SegmentSummary<TItem>>,
): Promise<Map<string, SegmentFacts>> {
  const facts = new Map<string, SegmentFacts>();
  const forks = [...summaries].filter(
    ([, summary]) =>
      summary.entryCount > 1 &&
      summary.start.forked_from !== undefined &&
      summaries.has(summary.start.forked_from.segment_id),
  );
  if (forks.length === 0) return facts;
  const compactedFrom = (id: string) => summaries.get(id)?.start.compacted_from?.segment_id;
  const inLine = (id: string, source: string) => {
    const seen = new Set<string>();
    for (let at: string | undefined = id; at !== undefined && !seen.has(at); at = compactedFrom(at)) {
      if (at === source) return true;
      seen.add(at);
    }
    return false;
  };
  for (const [segmentId, summary] of forks) {
    const source = summary.start.forked_from?.segment_id as string;
    const carriedUpTo = await newestCarried(store, sessionId, segmentId, source);
    if (carriedUpTo === undefined) continue;
    facts.set(segmentId, { ...facts.get(segmentId), carriedUpTo });
    for (const [otherId, other] of summaries) {
      if (otherId === segmentId || other.last.ts <= carriedUpTo || !inLine(otherId, source)) continue;
      if (facts.get(otherId)?.lastRunCompletedAt !== undefined) continue;
      const completed = await newestRunCompleted(store, { sessionId, segmentId: otherId });
      if (completed !== undefined)
        facts.set(otherId, { ...facts.get(otherId), lastRunCompletedAt: completed });
    }
  }
  return facts;
}

/**
 * The newest `ts` among the source's entries a fork carries: a drift fork starts with copies of
 * source entries, verbatim; its first entry that is not one of them (the write that drifted, which
 * may have been stamped before the fork was made) ends the copies.
 */
async function newestCarried<TItem>(
  store: Store<TItem>,
  sessionId: string,
  segmentId: string,
  source: string,
): Promise<number | undefined> {
  const known = new Set<string>();
  for await (const batch of store.readFrom({ sessionId, segmentId: source }, 1))
    for (const entry of batch) known.add(JSON.stringify(entry));
  let newest: number | undefined;
  for await (const batch of store.readFrom({ sessionId, segmentId }, 1)) {
    for (const entry of batch as readonly Entry<TItem>[]) {
      if (!known.has(JSON.stringify(entry))) return newest;
      newest = Math.max(newest ?? entry.ts, entry.ts);
    }
  }
  return newest;
}

/** The `ts` of a segment's newest `run_completed`. */
async function newestRunCompleted<TItem>(
  store: Store<TItem>,
  ref: { sessionId: string; segmentId: string },
): Promise<number | undefined> {
  let newest: number | undefined;
  for await (const batch of store.readFrom(ref, 0)) {
    for (const entry of batch as readonly Entry<TItem>[]) {
      if (entry.kind === "run_completed") newest = Math.max(newest ?? entry.ts, entry.ts);
    }
  }
  return newest;
}
