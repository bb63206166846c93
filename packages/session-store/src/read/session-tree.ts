import type { MinimalItem, ParentLink } from "../entry/entry-schema.js";
import { CorruptEntryError, NotFoundError } from "../errors.js";
import type { Store } from "../store/store.js";

/** How far up a tree is followed: a tree is a few levels deep; a forged circle of parents stops here. */
const MAX_TREE_DEPTH = 64;

/**
 * A sub-pod session's link to its parent (parent session, spawning call, role, depth), from the
 * `segment_start` of its oldest segment (every later segment carries the same link on);
 * undefined for a root session. `NotFoundError` for an unknown session.
 */
export async function parentOf<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<ParentLink | undefined> {
  const segmentId = (await store.listSegments(sessionId)).at(-1);
  if (segmentId === undefined)
    throw new NotFoundError({ what: "session", id: sessionId, where: "its store" });
  return (await store.describeSegment({ sessionId, segmentId })).start.parent;
}

/** One session of a tree on the way from its root, with its link to its parent. */
export interface TreeStep {
  readonly sessionId: string;
  readonly link: ParentLink;
}

/** Where a session sits in its tree (see `ancestryOf`). */
export interface Ancestry {
  /** The top of the chain of parents this store holds: the tree's root, or a detached session. */
  readonly rootSessionId: string;
  /** The links from the root's child down to the session itself (empty for a root). */
  readonly steps: TreeStep[];
  /** The top session names a parent that is not in this store (deleted, or another store's). */
  readonly detached: boolean;
}

/**
 * Where `sessionId` sits in its tree, followed up through `parentOf`: the root's id and the links
 * from the root's child down to the session. A session whose parent is not in the store is the
 * top of what the store holds (`detached`). A chain longer than any tree (a forged circle of
 * parents) is `CorruptEntryError`; an unknown `sessionId` is `NotFoundError`.
 */
export async function ancestryOf<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<Ancestry> {
  const steps: TreeStep[] = [];
  let id = sessionId;
  let link = await parentOf(store, id);
  for (let level = 0; level <= MAX_TREE_DEPTH; level++) {
    if (link === undefined) return { rootSessionId: id, steps, detached: false };
    let above: ParentLink | undefined;
    try {
      above = await parentOf(store, link.session_id);
    } catch (error) {
      if (!NotFoundError.isInstance(error)) throw error;
      return { rootSessionId: id, steps, detached: true };
    }
    steps.unshift({ sessionId: id, link });
    id = link.session_id;
    link = above;
  }
  throw new CorruptEntryError({
    file: `session ${sessionId}`,
    line: 1,
    reason: `its parents do not lead to a root within ${MAX_TREE_DEPTH} levels (a circle of parent links)`,
  });
}

/** The root session of the tree `sessionId` belongs to (itself for a root). */
export async function rootSessionOf<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<string> {
  return (await ancestryOf(store, sessionId)).rootSessionId;
}

/**
 * Every session of the tree below `sessionId` (its children, theirs, …), parents before their
 * children, each level newest first, through the store's child index. Each session is visited
 * once, so a forged link back up cannot loop.
 */
export async function descendantsOf<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<{ sessionId: string; parentSessionId: string }[]> {
  const found: { sessionId: string; parentSessionId: string }[] = [];
  const seen = new Set([sessionId]);
  for (let queue = [sessionId]; queue.length > 0; ) {
    const next: string[] = [];
    for (const parent of queue) {
      for (const child of await store.listChildSessions(parent)) {
        if (seen.has(child)) continue;
        seen.add(child);
        found.push({ sessionId: child, parentSessionId: parent });
        next.push(child);
      }
    }
    queue = next;
  }
  return found;
}
