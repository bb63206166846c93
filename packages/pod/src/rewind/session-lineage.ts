import {
  type Entry,
  entriesThroughTurn,
  lineOf,
  type SegmentRef,
  type SessionOverview,
  type Store,
} from "@podkit/session-store";

/** One segment of a session's line of work, as far as that line uses it. */
export interface LineageSegment<TItem> {
  ref: SegmentRef;
  /** The entries the line holds: a whole head, an ancestor up to where its child starts. */
  entries: readonly Entry<TItem>[];
  /** The turn the segment starts after (its lineage's `at_turn`, else 0). */
  startTurn: number;
  /** The last finished turn its entries hold. */
  endTurn: number;
  /** How the segment continues its parent in the line. */
  link: { kind: "forked" | "compacted"; segmentId: string; atTurn: number } | undefined;
  /**
   * False for a compaction made in the middle of a turn: its first history already holds part of
   * the turn after `startTurn`, so the state at the end of `startTurn` is its parent's.
   */
  startsClean: boolean;
}

/**
 * Reads the line of work a session's head continues, oldest segment first (`lineOf`, the walk
 * every reader of a session uses): the head's first `headCount` entries, then each segment it
 * continues, cut where the line left it — a fork after its `at_turn` (the cut `forkAt` makes), a
 * compaction at what was written before it started.
 */
export async function readLineage<TItem>(
  store: Store<TItem>,
  overview: SessionOverview,
  headCount: number,
): Promise<LineageSegment<TItem>[]> {
  const sessionId = overview.sessionId;
  const ids = lineOf(overview);
  const line: LineageSegment<TItem>[] = [];
  let child: LineageSegment<TItem> | undefined;
  for (let i = ids.length - 1; i >= 0; i--) {
    const ref: SegmentRef = { sessionId, segmentId: ids[i] as string };
    const all = await readSegment(store, ref);
    let entries = all.slice(0, headCount);
    if (child !== undefined) {
      const link = child.link as NonNullable<LineageSegment<TItem>["link"]>;
      if (link.segmentId !== ref.segmentId) break;
      const childStart = child.entries[0] as Entry<TItem>;
      const through = entriesThroughTurn(all, link.atTurn, ref.segmentId);
      const cut = link.kind === "forked" ? through : prefixWrittenBy(all, childStart.ts);
      // A compaction in the middle of a turn: this segment went on into the next turn before it.
      if (link.kind === "compacted")
        child.startsClean = !all.slice(through, cut).some((entry) => entry.kind === "invoke");
      entries = all.slice(0, cut);
    }
    const start = entries[0];
    if (start?.kind !== "segment_start") break;
    const lineage = start.compacted_from ?? start.forked_from;
    const link =
      lineage === undefined
        ? undefined
        : {
            kind: start.compacted_from === undefined ? ("forked" as const) : ("compacted" as const),
            segmentId: lineage.segment_id,
            atTurn: lineage.at_turn,
          };
    const segment: LineageSegment<TItem> = {
      ref,
      entries,
      startTurn: link?.atTurn ?? 0,
      endTurn: lastFinishedTurn(entries, link?.atTurn ?? 0),
      link,
      startsClean: true,
    };
    line.unshift(segment);
    child = segment;
    headCount = Number.POSITIVE_INFINITY;
  }
  return line;
}

/**
 * The segment of the line whose state at the end of `turn` a fork starts from: the newest one
 * holding that turn whole, so the fork's prefix is what the model saw last (the cache is warm).
 */
export function segmentHoldingTurn<TItem>(
  line: readonly LineageSegment<TItem>[],
  turn: number,
): LineageSegment<TItem> | undefined {
  for (let i = line.length - 1; i >= 0; i--) {
    const segment = line[i] as LineageSegment<TItem>;
    if (turn > segment.endTurn) continue;
    if (turn > segment.startTurn || (turn === segment.startTurn && segment.startsClean)) return segment;
  }
  return undefined;
}

/**
 * The turn each entry belongs to: an entry after an `invoke` belongs to the turn in flight (the
 * one after the last finished), bookkeeping after a `turn_end` to the turn that ended — the
 * numbering `SessionLog.forkAt` cuts by.
 */
export function turnsOf<TItem>(entries: readonly Entry<TItem>[], startTurn: number): number[] {
  const turns: number[] = [];
  let ended = startTurn;
  let open = false;
  for (const entry of entries) {
    if (entry.kind === "invoke") open = true;
    if (entry.kind === "turn_end") {
      ended = entry.turn;
      open = false;
      turns.push(ended);
      continue;
    }
    turns.push(open ? ended + 1 : ended);
  }
  return turns;
}

function lastFinishedTurn<TItem>(entries: readonly Entry<TItem>[], startTurn: number): number {
  let turn = startTurn;
  for (const entry of entries) if (entry.kind === "turn_end") turn = entry.turn;
  return turn;
}

/** The leading entries written before `ts` (a compaction's start): what the line took with it. */
function prefixWrittenBy<TItem>(entries: readonly Entry<TItem>[], ts: number): number {
  let end = 0;
  while (end < entries.length && (entries[end] as Entry<TItem>).ts <= ts) end++;
  return Math.max(end, 1);
}

async function readSegment<TItem>(store: Store<TItem>, ref: SegmentRef): Promise<Entry<TItem>[]> {
  const entries: Entry<TItem>[] = [];
  for await (const batch of store.readFrom(ref, 0)) entries.push(...batch);
  return entries;
}
