import { h, short } from "./dom.js";

/** A row of `GET /sessions` (what the viewer reads of it). */
export interface SessionRow {
  sessionId: string;
  lastActivity: string;
  turns: number;
  firstInput: string;
  status: string;
  pendingApprovals: { callId: string; tool: string }[];
  parent?: { sessionId: string; role: string; depth: number };
}

/** A node of the `tree` of `GET /sessions/:id`: a row with its child sessions (sub-pods). */
export interface TreeNode extends SessionRow {
  children: TreeNode[];
}

/** Each listed session with its depth, children right after their parent (as `podkit session list`). */
export function listedInTrees(rows: readonly SessionRow[]): { row: SessionRow; depth: number }[] {
  const ids = new Set(rows.map((row) => row.sessionId));
  const childrenOf = new Map<string, SessionRow[]>();
  const tops: SessionRow[] = [];
  for (const row of rows) {
    const parent = row.parent?.sessionId;
    if (parent === undefined || !ids.has(parent) || parent === row.sessionId) tops.push(row);
    else childrenOf.set(parent, [...(childrenOf.get(parent) ?? []), row]);
  }
  const listed: { row: SessionRow; depth: number }[] = [];
  const seen = new Set<string>();
  const walk = (row: SessionRow, depth: number) => {
    if (seen.has(row.sessionId)) return;
    seen.add(row.sessionId);
    listed.push({ row, depth });
    for (const child of childrenOf.get(row.sessionId) ?? []) walk(child, depth + 1);
  };
  for (const row of tops) walk(row, 0);
  return listed;
}

/** `root`, or the sub-pod's role. */
export function roleOf(row: SessionRow): string {
  return row.parent === undefined ? "root" : row.parent.role;
}

/** The status badge: how the session's latest turn ended, and its pending approvals. */
export function statusBadge(row: SessionRow): HTMLElement {
  const waiting = row.pendingApprovals.length;
  const kind = /^[a-z_]+/.exec(row.status)?.[0] ?? "other";
  return h(
    "span",
    { class: `status status-${kind}`, "data-status": row.status },
    waiting > 0 ? `${row.status} · ${waiting} waiting` : row.status,
  );
}

/**
 * The tree of sub-pods the shown session belongs to (`#tree`): each session with its role,
 * status and turns, a link to its page, the shown one marked; above it, the other sessions of the
 * tree that wait for a person's approval, each linking to its page (where Allow/Deny are).
 * Empty for a session that is alone in its tree.
 */
export function drawTree(box: HTMLElement, tree: TreeNode, shown: string): void {
  const nodes: TreeNode[] = [];
  const collect = (node: TreeNode) => {
    nodes.push(node);
    node.children.forEach(collect);
  };
  collect(tree);
  if (nodes.length === 1) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  const waiting = nodes
    .filter((node) => node.sessionId !== shown && node.pendingApprovals.length > 0)
    .map((node) =>
      h(
        "li",
        { class: "waiting", "data-session-id": node.sessionId },
        `${roleOf(node)} waits for your approval of ${node.pendingApprovals.map((a) => a.tool).join(", ")} · `,
        h("a", { href: `#/sessions/${node.sessionId}` }, "open it"),
      ),
    );
  const item = (node: TreeNode): HTMLElement => {
    const current = node.sessionId === shown;
    return h(
      "li",
      { class: `tree-node${current ? " current" : ""}`, "data-session-id": node.sessionId },
      h(
        "a",
        { href: `#/sessions/${node.sessionId}`, ...(current ? { "aria-current": "page" } : {}) },
        h("span", { class: "role" }, roleOf(node)),
        ` ${short(node.sessionId)}`,
      ),
      " ",
      statusBadge(node),
      h("span", { class: "turns" }, ` ${node.turns} turn(s)`),
      current ? h("span", { class: "here" }, " ← this session") : null,
      node.children.length === 0 ? null : h("ul", {}, ...node.children.map(item)),
    );
  };
  box.hidden = false;
  box.replaceChildren(
    h("h2", {}, "Sub-pods"),
    ...(waiting.length === 0 ? [] : [h("ul", { class: "waiting-list", id: "tree-waiting" }, ...waiting)]),
    h("ul", { class: "tree-root" }, item(tree)),
  );
}
