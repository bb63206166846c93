import type { SessionRow } from "./session-rows.js";

/** A session with its child sessions (sub-pods), as `podkit session list` and `show` draw them. */
export interface SessionTreeNode {
  readonly row: SessionRow;
  readonly children: SessionTreeNode[];
}

/**
 * Arranges listed sessions into trees: each child under its parent, in the listing's order. A
 * child whose parent is not in the listing (deleted, another store) stays at the top level.
 */
export function sessionForest(rows: readonly SessionRow[]): SessionTreeNode[] {
  const nodes = new Map(rows.map((row) => [row.sessionId, { row, children: [] as SessionTreeNode[] }]));
  const roots: SessionTreeNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.row.parent === undefined ? undefined : nodes.get(node.row.parent.sessionId);
    if (parent === undefined || parent === node) roots.push(node);
    else parent.children.push(node);
  }
  return roots;
}

/** The tree `sessionId` belongs to, from its root (undefined when it is not listed). */
export function treeOf(forest: readonly SessionTreeNode[], sessionId: string): SessionTreeNode | undefined {
  const contains = (node: SessionTreeNode): boolean =>
    node.row.sessionId === sessionId || node.children.some(contains);
  return forest.find(contains);
}
