import type { MinimalItem } from "../entry/entry-schema.js";
import type { Store } from "../store/store.js";
import { debrisProblem, type SessionRow, sessionRow } from "./session-rows.js";
import { ancestryOf, descendantsOf } from "./session-tree.js";

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
 * pending approvals): up through the parent links, down through the store's child index — only
 * the tree's sessions are read. A member that is debris (no segment) is left out.
 */
export async function readSessionTree<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<SessionTreeNode> {
  const { rootSessionId } = await ancestryOf(store, sessionId);
  const below = await descendantsOf(store, rootSessionId);
  const rows = new Map<string, SessionRow>([[rootSessionId, await sessionRow(store, rootSessionId)]]);
  for (const { sessionId: id } of below) {
    try {
      rows.set(id, await sessionRow(store, id));
    } catch (error) {
      if (debrisProblem(error) === undefined) throw error;
    }
  }
  const childrenOf = new Map<string, string[]>();
  for (const { sessionId: id, parentSessionId } of below) {
    if (rows.has(id)) childrenOf.set(parentSessionId, [...(childrenOf.get(parentSessionId) ?? []), id]);
  }
  // Built from the root down, each session once: a (forged) cycle of parents cannot loop.
  const build = (id: string): SessionTreeNode => ({
    ...(rows.get(id) as SessionRow),
    children: (childrenOf.get(id) ?? []).map(build),
  });
  return build(rootSessionId);
}
