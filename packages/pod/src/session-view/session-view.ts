import type { Item } from "@podkit/llm-worker";
import { describeSession, type SessionOverview, type Store } from "@podkit/session-store";
import { readSessionLine, type ShownSegment } from "./session-line.js";
import { readSessionTree, type SessionTreeNode } from "./session-tree.js";

/**
 * One session as `podkit session show --json` prints it and `GET /sessions/:id` returns it: the
 * overview (head, other branches, compacted segments), each segment of its line with its turns,
 * tools, approvals and usage, and the tree of sub-pods it belongs to (from its root; each session
 * with its status and pending approvals, so a root shows which child waits for a person).
 */
export interface SessionView extends SessionOverview {
  segments: ShownSegment[];
  tree: SessionTreeNode;
}

/**
 * Reads session `sessionId` as `SessionView`. Fails with the store's `NotFoundError` for an unknown
 * session and its `CorruptEntryError` for a corrupt line of this session (the tree's other
 * sessions are read as far as they are intact).
 */
export async function readSessionView(store: Store<Item>, sessionId: string): Promise<SessionView> {
  const overview = await describeSession(store, sessionId);
  const segments = await readSessionLine(store, overview);
  return { ...overview, segments, tree: await readSessionTree(store, sessionId) };
}
