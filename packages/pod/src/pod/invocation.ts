import { isAbsolute, relative, resolve, sep } from "node:path";
import type { LoadedManifest } from "@podkit/manifest";
import type { MinimalItem, Store } from "@podkit/session-store";
import { CorruptEntryError, describeSession, rootSessionOf } from "@podkit/session-store";

/**
 * The `extension` domain that records how a session's manifest was given: the explicit manifest
 * file (`-m`) and the `--set` overlays, so that `podkit resume`, `podkit approve` and `podkit serve`
 * continue the session with the same pod without the user repeating them. Additive in format 3
 * (docs/session-store.md, "What bumps the version"): a reader without it keeps the payload.
 */
export const INVOCATION_DOMAIN = "pod.invocation";

/** What a session was started with, beyond the workspace's own manifest. */
export interface ManifestInvocation {
  /** The explicit manifest file: relative to the workspace when inside it, else absolute. */
  manifest?: string;
  /** The `--set key=value` overlays, in the order given. */
  set?: string[];
}

/** The invocation of `loaded`, or undefined when it is the workspace's manifest alone. */
export function invocationOf(loaded: LoadedManifest): ManifestInvocation | undefined {
  const set = loaded.layers.flatMap((layer) =>
    layer.kind === "set" && layer.overlay !== undefined ? [layer.overlay] : [],
  );
  const invocation: ManifestInvocation = {};
  if (loaded.file !== undefined) invocation.manifest = workspaceRelative(loaded.workspace, loaded.file);
  if (set.length > 0) invocation.set = set;
  return invocation.manifest === undefined && invocation.set === undefined ? undefined : invocation;
}

/** The recorded manifest file as an absolute path (relative ones resolve against the workspace). */
export function invocationManifestPath(
  workspace: string,
  invocation: ManifestInvocation,
): string | undefined {
  return invocation.manifest === undefined ? undefined : resolve(workspace, invocation.manifest);
}

/**
 * The invocation recorded in the tree `sessionId` belongs to (a sub-pod's session answers with its
 * root's), or undefined when none was recorded. The record sits before a segment's first `invoke`
 * (a fork carries it there too); a compacted segment starts with empty extension state, so the
 * search follows `compacted_from` back to where it was written. Each segment is read only up to
 * its first `invoke`: the cost grows with the number of compactions, not with the session.
 * Everything read is untrusted: a payload of the wrong shape counts as none, a lineage that loops
 * ends the search.
 */
export async function recordedInvocation<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<ManifestInvocation | undefined> {
  const root = await rootSessionOf(store, sessionId);
  let segmentId: string | undefined = (await describeSession(store, root)).head.segmentId;
  const seen = new Set<string>();
  while (segmentId !== undefined && !seen.has(segmentId)) {
    seen.add(segmentId);
    let found: unknown;
    let previous: string | undefined;
    try {
      for await (const entry of store.readAll({ sessionId: root, segmentId })) {
        if (entry.kind === "invoke") break;
        if (entry.kind === "segment_start") previous = entry.compacted_from?.segment_id;
        if (entry.kind === "extension" && entry.domain === INVOCATION_DOMAIN) found = entry.payload;
      }
    } catch (error) {
      // A bad line further down is the restore's to report (with its file, line and the fork
      // that recovers), not this read's.
      if (!CorruptEntryError.isInstance(error)) throw error;
    }
    if (found !== undefined) return parseInvocation(found);
    segmentId = previous;
  }
  return undefined;
}

/** The payload as a `ManifestInvocation`, or undefined when it is not one. */
export function parseInvocation(payload: unknown): ManifestInvocation | undefined {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return undefined;
  const { manifest, set } = payload as Record<string, unknown>;
  const invocation: ManifestInvocation = {};
  if (manifest !== undefined) {
    if (typeof manifest !== "string" || manifest === "" || manifest.includes("\0")) return undefined;
    invocation.manifest = manifest;
  }
  if (set !== undefined) {
    if (!Array.isArray(set) || !set.every((s) => typeof s === "string")) return undefined;
    invocation.set = [...set];
  }
  return invocation.manifest === undefined && invocation.set === undefined ? undefined : invocation;
}

function workspaceRelative(workspace: string, file: string): string {
  const rel = relative(workspace, file);
  return rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? file : rel;
}
