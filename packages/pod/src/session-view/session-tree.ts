import type { Item } from "@podkit/llm-worker";
import { CorruptEntryError, NotFoundError, type Store } from "@podkit/session-store";
import { entriesBeforeCorruption } from "./entries-before-corruption.js";
import { type SessionRow, sessionRow } from "./session-rows.js";

/**
 * A session with its child sessions (sub-pods), as `podkit session list` and `show` draw them:
 * the session's row, and its children's nodes in the listing's order (newest first).
 */
export interface SessionTreeNode extends SessionRow {
  children: SessionTreeNode[];
}

/**
 * Arranges listed sessions into trees: each child under its parent, in the listing's order. A
 * child whose parent is not in the listing (deleted, another store) stays at the top level.
 */
export function sessionForest(rows: readonly SessionRow[]): SessionTreeNode[] {
  const nodes = new Map(rows.map((row) => [row.sessionId, { ...row, children: [] as SessionTreeNode[] }]));
  const roots: SessionTreeNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.parent === undefined ? undefined : nodes.get(node.parent.sessionId);
    if (parent === undefined || parent === node) roots.push(node);
    else parent.children.push(node);
  }
  return roots;
}

/** The tree `sessionId` belongs to, from its root (undefined when it is not listed). */
export function treeOf(forest: readonly SessionTreeNode[], sessionId: string): SessionTreeNode | undefined {
  const contains = (node: SessionTreeNode): boolean =>
    node.sessionId === sessionId || node.children.some(contains);
  return forest.find(contains);
}

/**
 * The tree of sub-pods `sessionId` belongs to, from its root, each session with its row (status,
 * pending approvals). Only the tree's sessions are read in full; every other session of the
 * store is asked for its parent alone (the start of one segment).
 */
export async function readSessionTree(store: Store<Item>, sessionId: string): Promise<SessionTreeNode> {
  const listed = await store.listSessions();
  const parents = new Map<string, string | undefined>();
  for (const id of listed) parents.set(id, await parentOf(store, id));
  if (!parents.has(sessionId))
    throw new NotFoundError({ what: "session", id: sessionId, where: "the store" });
  let root = sessionId;
  const above = new Set([root]);
  for (let up = parents.get(root); up !== undefined && parents.has(up) && !above.has(up); ) {
    root = up;
    above.add(up);
    up = parents.get(up);
  }
  const members = new Set([root]);
  // Parents before children is not the listing's order (children are newer): sweep until stable.
  for (let grew = true; grew; ) {
    grew = false;
    for (const [id, parent] of parents) {
      if (parent !== undefined && members.has(parent) && !members.has(id)) {
        members.add(id);
        grew = true;
      }
    }
  }
  const rows = new Map<string, SessionRow>();
  for (const id of listed) if (members.has(id)) rows.set(id, await sessionRow(store, id));
  // Built from the root down, each session once: a (forged) cycle of parents cannot loop.
  const build = (id: string): SessionTreeNode => ({
    ...(rows.get(id) as SessionRow),
    children: [...rows.keys()].filter((child) => child !== root && parents.get(child) === id).map(build),
  });
  return build(root);
}

/**
 * The parent session named in `sessionId`'s `segment_start` (every segment of a child carries it
 * on), undefined for a root; a session gone meanwhile has none, a damaged one is read up to its
 * bad line.
 */
async function parentOf(store: Store<Item>, sessionId: string): Promise<string | undefined> {
  try {
    const [segmentId] = await store.listSegments(sessionId);
    if (segmentId === undefined) return undefined;
    const ref = { sessionId, segmentId };
    let start: Awaited<ReturnType<typeof entriesBeforeCorruption>>[number] | undefined;
    try {
      start = (await store.describeSegment(ref)).start;
    } catch (error) {
      if (!CorruptEntryError.isInstance(error)) throw error;
      start = (await entriesBeforeCorruption(store, ref))[0];
    }
    return start?.kind === "segment_start" ? start.parent?.session_id : undefined;
  } catch (error) {
    if (NotFoundError.isInstance(error)) return undefined;
    throw error;
  }
}
