import type { SessionRow, SessionTreeNode } from "@podkit/session-store";
import { oneLine } from "./event-printer.js";

/** `podkit session list`: one line per session, children indented under their parent. */
export function sessionListText(forest: readonly SessionTreeNode[]): string {
  const lines: string[] = [];
  const walk = (node: SessionTreeNode, depth: number) => {
    lines.push(`${depth === 0 ? "" : `${"  ".repeat(depth - 1)}└ `}${rowLine(node)}`);
    for (const child of node.children) walk(child, depth + 1);
  };
  for (const root of forest) walk(root, 0);
  return `${lines.join("\n")}\n`;
}

/**
 * The tree a session belongs to, for `podkit session show`: every session of it with its role,
 * the shown one marked; open another with `podkit session show <id>`.
 */
export function sessionTreeText(tree: SessionTreeNode, shown: string): string {
  const lines = ["", "sub-pod tree (open one with `podkit session show <id>`):"];
  const walk = (node: SessionTreeNode, depth: number) => {
    const role = node.parent === undefined ? "root" : `${node.parent.role} (depth ${node.parent.depth})`;
    const mark = node.sessionId === shown ? "  ← this session" : "";
    lines.push(
      `${"  ".repeat(depth + 1)}${depth === 0 ? "" : "└ "}${role} ${node.sessionId}  ${node.turns} turn(s)${mark}`,
    );
    for (const child of node.children) walk(child, depth + 1);
  };
  walk(tree, 0);
  return `${lines.join("\n")}\n`;
}

function rowLine(row: SessionRow): string {
  const role = row.parent === undefined ? "" : `[${row.parent.role}]  `;
  const status = STATUS_MARKS[row.status as keyof typeof STATUS_MARKS];
  return `${row.sessionId}  ${role}${row.lastActivity}  ${row.turns} turn(s)  ${row.segments} segment(s)  ${status === undefined ? "" : `(${status})  `}${oneLine(row.firstInput, 60)}`;
}

/** How `session list` marks a session whose latest turn did not simply finish (none otherwise). */
const STATUS_MARKS = {
  errored: "failed",
  open: "running or died",
  awaiting_approval: "awaiting approval",
  limit_reached: "hit max_turns",
  paused: "paused",
  yielded: "yielded",
  budget_exhausted: "budget exhausted",
} as const;
