import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { ancestryOf, type ParentLink, parentOf, type Store } from "@podkit/session-store";
import { treeTokens } from "../budget/log-totals.js";
import { TreeBudget } from "../budget/tree-budget.js";
import type { WarningSink } from "../warnings.js";
import { SubpodSessionError } from "./errors.js";
import { ROOT_POD_PATH, type SubpodPlacement } from "./placement.js";
import { loadSubpodRoles } from "./roles.js";

/** How a session is opened: as the root it is, or as the child its log says it is, with its role's manifest. */
export type SessionPlace =
  | { readonly kind: "root" }
  /** Placed by its parent (the host that spawned it): checked against the log, used as given. */
  | { readonly kind: "placed" }
  /** Opened from outside its tree: the role's manifest and placement, derived from the tree's root manifest. */
  | { readonly kind: "derived"; readonly loaded: LoadedManifest; readonly placement: SubpodPlacement };

/**
 * Decides how session `sessionId` may be opened by a pod built from `loaded`, before anything of
 * the pod is loaded — the one check every way of continuing a session goes through (`Pod.restore`,
 * and with it the CLI, the HTTP server, the dispatcher's workers and a parent's `send_pod`):
 * - a root session opens as itself (a `placement` given for it is refused);
 * - a child opened by its parent (`placement` given) must be placed exactly as its log records
 *   (parent session, spawning call, role, depth), else `SubpodSessionError`;
 * - a child opened from outside its tree is never opened as a root: `loaded` is taken as the tree's
 *   root manifest and the roles are followed down the logged links, each role lent from the one
 *   above it, so the child gets its role's manifest, loan, tools and depth — never more. A role the
 *   manifests no longer declare, a depth that is not the child's place in the tree, or one past the
 *   role's `max_depth` is `SubpodSessionError`.
 */
export async function placeSession(
  store: Store<Item>,
  sessionId: string,
  loaded: LoadedManifest,
  given: { placement?: SubpodPlacement | undefined; warn: WarningSink },
): Promise<SessionPlace> {
  const link = await parentOf(store, sessionId);
  if (given.placement !== undefined) {
    if (link === undefined || !sameLink(link, given.placement.link)) {
      throw new SubpodSessionError(
        sessionId,
        `is not the child this pod was placed as (${describe(given.placement.link)}): its log records ${link === undefined ? "a root session" : describe(link)}`,
        { hint: "open a child with the placement its parent recorded, or restore it without one" },
      );
    }
    return { kind: "placed" };
  }
  if (link === undefined) return { kind: "root" };
  const { rootSessionId, steps, detached } = await ancestryOf(store, sessionId);
  if (detached) {
    throw new SubpodSessionError(
      sessionId,
      `is a sub-pod of a tree whose root is not in this store (${rootSessionId} names a parent that is gone): its role cannot be derived`,
      {
        hint: "a sub-pod runs with its role's manifest and scope only; with its tree gone, fork it (podkit session fork) to continue as a root of your own",
      },
    );
  }
  let current = loaded;
  let path = ROOT_POD_PATH;
  for (const [index, step] of steps.entries()) {
    const depth = index + 1;
    if (step.link.depth !== depth) {
      throw new SubpodSessionError(
        step.sessionId,
        `records depth ${step.link.depth}, but it is ${depth} level(s) below its root ${rootSessionId}`,
        { hint: "the log of this tree is inconsistent; continue it from its root" },
      );
    }
    // The root's roles fail loudly (as building the root pod would); a child's own roles that its
    // loan cannot cover are left out with a warning, as they are when its parent spawns it.
    const roles = await loadSubpodRoles(current, index === 0 ? undefined : { warn: given.warn });
    const role = roles.get(step.link.role);
    if (role === undefined) {
      throw new SubpodSessionError(
        step.sessionId,
        `is a sub-pod of role "${step.link.role}", which the manifest of its parent (${current.file ?? current.workspace}) no longer declares`,
        {
          hint: `declare [subpods.${step.link.role}] again, or continue the tree from its root ${rootSessionId}`,
        },
      );
    }
    if (depth > role.config.max_depth) {
      throw new SubpodSessionError(
        step.sessionId,
        `is at depth ${depth}, past its role "${role.name}"'s max_depth ${role.config.max_depth}`,
        {
          hint: `raise [subpods.${role.name}] max_depth, or continue the tree from its root ${rootSessionId}`,
        },
      );
    }
    current = role.loaded;
    path = `${path} › ${role.name}@${step.sessionId.slice(-8)}`;
  }
  const own = steps.at(-1) as { link: ParentLink };
  const caps = loaded.manifest.budget;
  const budget = caps === undefined ? undefined : new TreeBudget(caps);
  // What the whole tree spent so far counts against its caps, as it does under the root.
  await budget?.loadBase(() => treeTokens(store, rootSessionId));
  return {
    kind: "derived",
    loaded: current,
    placement: { link: own.link, path, ...(budget === undefined ? {} : { budget }) },
  };
}

function sameLink(a: ParentLink, b: ParentLink): boolean {
  return a.session_id === b.session_id && a.call_id === b.call_id && a.role === b.role && a.depth === b.depth;
}

function describe(link: ParentLink): string {
  return `role "${link.role}" at depth ${link.depth} under session ${link.session_id}, call ${link.call_id}`;
}
