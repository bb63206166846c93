import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import { describeSession, type SegmentInfo, type SessionOverview } from "../log/session-head.js";
import type { Store } from "../store/store.js";
import { lineOf } from "./session-line.js";
import { type SegmentSummaryText, summarizeEntries } from "./session-summary.js";
import { readSessionTree, type SessionTreeNode } from "./tree-view.js";

/** One segment of the session's line of work, with what it records. */
export interface ShownSegment extends SegmentSummaryText {
  info: SegmentInfo;
}

/**
 * One session as `podkit session show --json` prints it and `GET /sessions/:id` returns it: the
 * overview (head, other branches, compacted segments), each segment of its line (`lineOf`: the
 * segments its event stream covers too) with its turns, tools, approvals and usage, and the tree
 * of sub-pods it belongs to (from its root; each session with its status and pending approvals,
 * so a root shows which child waits for a person).
 */
export interface SessionView extends SessionOverview {
  segments: ShownSegment[];
  tree: SessionTreeNode;
}

/**
 * The segments of a session's line of work (`lineOf`), oldest first, each with its turns and
 * usage. A segment the next one was forked from shows its turns up to the fork's turn only: its
 * later turns are another branch's (listed in the overview), not this line's.
 */
export async function readSessionLine<TItem = MinimalItem>(
  store: Store<TItem>,
  overview: SessionOverview,
): Promise<ShownSegment[]> {
  const infos = new Map(
    [overview.head, ...overview.otherBranches, ...overview.compacted].map((info) => [info.segmentId, info]),
  );
  const line = lineOf(overview);
  const shown: ShownSegment[] = [];
  for (const [index, segmentId] of line.entries()) {
    const entries: Entry<TItem>[] = [];
    for await (const entry of store.readAll({ sessionId: overview.sessionId, segmentId }))
      entries.push(entry);
    const summary = summarizeEntries(entries);
    const fork = infos.get(line[index + 1] as string)?.forkedFrom;
    if (fork?.segmentId === segmentId) {
      const cut = summary.turns.findIndex((turn) => turn.turn === fork.atTurn);
      summary.turns = summary.turns.slice(0, cut + 1);
    }
    shown.push({ info: infos.get(segmentId) as SegmentInfo, ...summary });
  }
  return shown;
}

/**
 * Reads session `sessionId` as `SessionView`. Fails with the store's `NotFoundError` for an unknown
 * session and its `CorruptEntryError` for a corrupt line of this session (the tree's other
 * sessions are read as far as they are intact).
 */
export async function readSessionView<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<SessionView> {
  const overview = await describeSession(store, sessionId);
  const segments = await readSessionLine(store, overview);
  return { ...overview, segments, tree: await readSessionTree(store, sessionId) };
}
