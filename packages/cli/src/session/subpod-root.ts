import type { Item } from "@podkit/llm-worker";
import type { ParentLink, Store } from "@podkit/session-store";
import { PodkitCliError } from "../errors.js";

/** A sub-pod's link to its parent, from its first segment; undefined for a root (or a session with no segment). */
export async function parentOf(store: Store<Item>, sessionId: string): Promise<ParentLink | undefined> {
  const [segmentId] = await store.listSegments(sessionId);
  if (segmentId === undefined) return undefined;
  return (await store.describeSegment({ sessionId, segmentId })).start.parent;
}

/** The root of the tree `sessionId` belongs to: parents followed up to the session that has none. */
export async function rootSessionOf(store: Store<Item>, sessionId: string): Promise<string> {
  let id = sessionId;
  // Bounded: a tree is a few levels deep; a log that links in a circle stops here.
  for (let level = 0; level < 64; level++) {
    const parent = await parentOf(store, id);
    if (parent === undefined) return id;
    id = parent.session_id;
  }
  return id;
}

/**
 * Refuses to open a sub-pod's session as a pod of its own: restored from the workspace's manifest
 * it would get the root's tools and scope instead of its role's loan. Its parent continues it.
 */
export async function refuseSubpodSession(store: Store<Item>, sessionId: string): Promise<void> {
  const parent = await parentOf(store, sessionId);
  if (parent === undefined) return;
  const root = await rootSessionOf(store, parent.session_id);
  throw new PodkitCliError(
    `session ${sessionId} is a sub-pod (${parent.role}, depth ${parent.depth}) of session ${parent.session_id}: it runs only under its parent, with its role's manifest and scope`,
    { hint: `continue its tree and let the parent's send_pod continue it: podkit resume ${root} "…"` },
  );
}
