import type { Context } from "@opentelemetry/api";
import type { ParentLink } from "@podkit/session-store";
import type { TreeBudget } from "../budget/tree-budget.js";

/** The pod path of a root pod; children append ` › <role>#<n>`. */
export const ROOT_POD_PATH = "root";

/**
 * Where a child pod sits in its tree: its link to the parent (written to its `segment_start`)
 * and its pod path. Set by the parent's `spawn_pod`/`send_pod`, never by hand.
 */
export interface SubpodPlacement {
  readonly link: ParentLink;
  /** The pod path shown with its events, e.g. `root › worker#1 › reviewer#2`. */
  readonly path: string;
  /** The tree's budget the child draws on (its root's `[budget]` tree caps). */
  readonly budget?: TreeBudget;
  /**
   * The trace context of the parent's tool call that runs the child now (`spawn_pod`, `send_pod`):
   * the child's `invoke_agent` span is started under it. Read as each of the child's runs starts.
   */
  readonly traceParent?: () => Context | undefined;
}

/** The path of the `n`th child of `role` under `parentPath`. */
export function childPath(parentPath: string, role: string, n: number): string {
  return `${parentPath} › ${role}#${n}`;
}
