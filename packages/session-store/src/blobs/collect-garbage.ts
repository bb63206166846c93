import { type Pause, timeSlicer } from "../entry/time-slice.js";
import { NotFoundError, SessionStoreUsageError } from "../errors.js";
import type { Store } from "../store/store.js";
import type { BlobStore } from "./blob-store.js";

/** Blobs stored less than an hour ago are never collected: see `BlobGarbageOptions.graceMs`. */
export const DEFAULT_BLOB_GRACE_MS = 60 * 60 * 1000;
/** Digests per `remove` call. */
const REMOVE_BATCH = 500;
/** A digest anywhere in a string: `sha256:` and 64 lowercase hex digits. */
const DIGEST_IN_TEXT = /sha256:[0-9a-f]{64}/g;

/** Options of `collectBlobGarbage`. */
export interface BlobGarbageOptions {
  /**
   * Blobs last stored less than this many ms ago are kept whatever names them (default one
   * hour): a writer puts a blob before it appends the entry naming it, and this is how long it
   * may take in between.
   */
  graceMs?: number;
  /** Decide, report, remove nothing. */
  dryRun?: boolean;
  /** Stops the scan between entries with the signal's reason (nothing is removed then). */
  signal?: AbortSignal;
}

/** What a collection found and did. */
export interface BlobGarbageReport {
  /** The digests removed, or with `dryRun` the ones that would be. */
  removed: string[];
  /** Blobs past the grace period that some session names, kept. */
  kept: number;
  /** Leftovers of interrupted writes and removals cleaned up (FsStore paths; none on PostgreSQL). */
  debris: string[];
  dryRun: boolean;
}

/**
 * Removes the blobs of `store` that no session references and that were last stored more than
 * `graceMs` ago (docs/rewind.md, "Garbage collection").
 *
 * A blob is referenced when any committed entry of any segment of any session holds its digest
 * — `sha256:` and 64 lowercase hex digits — anywhere in its JSON: a field of a file-change entry,
 * a string inside a tool result, a key. The rule knows no entry kind, so whatever comes to name
 * blobs later (media in tool results) is covered without changing it, and anything that merely
 * looks like a digest only keeps a blob longer. Every segment is read to its end; one that cannot
 * be (a corrupt entry, a newer format) stops the collection with its error before anything is
 * removed. The removal itself is conditional on the age (`BlobStore.remove`), so a blob a writer
 * stores again while the collection runs is kept.
 */
export async function collectBlobGarbage<TItem>(
  store: Store<TItem>,
  options: BlobGarbageOptions = {},
): Promise<BlobGarbageReport> {
  const blobs = blobsOf(store);
  const graceMs = options.graceMs ?? DEFAULT_BLOB_GRACE_MS;
  if (!Number.isFinite(graceMs) || graceMs < 0) {
    throw new SessionStoreUsageError(`graceMs must be a duration in ms (0 or more), got ${graceMs}`);
  }
  const dryRun = options.dryRun === true;
  const debris = (await blobs.removeDebris?.({ olderThanMs: graceMs, dryRun })) ?? [];
  const candidates: string[] = [];
  for await (const digest of blobs.list({ olderThanMs: graceMs })) candidates.push(digest);
  if (candidates.length === 0) return { removed: [], kept: 0, debris, dryRun };
  const referenced = await referencedDigests(store, options.signal);
  const garbage = candidates.filter((digest) => !referenced.has(digest));
  options.signal?.throwIfAborted();
  let removed = garbage;
  if (!dryRun) {
    removed = [];
    for (let start = 0; start < garbage.length; start += REMOVE_BATCH) {
      removed.push(
        ...(await blobs.remove(garbage.slice(start, start + REMOVE_BATCH), { olderThanMs: graceMs })),
      );
    }
  }
  return { removed, kept: candidates.length - garbage.length, debris, dryRun };
}

/** The store's blobs, or `SessionStoreUsageError` for a store that keeps none. */
function blobsOf<TItem>(store: Store<TItem>): BlobStore {
  if (store.blobs === undefined) {
    throw new SessionStoreUsageError(
      `this session store (${store.constructor.name}) keeps no blobs: there is nothing to collect`,
    );
  }
  return store.blobs;
}

/**
 * Every digest the committed entries of `store` hold, over every segment of every session. A
 * session or segment removed while the scan runs references nothing.
 */
export async function referencedDigests<TItem>(
  store: Store<TItem>,
  signal?: AbortSignal,
): Promise<Set<string>> {
  const found = new Set<string>();
  const pause = timeSlicer(signal);
  for (const sessionId of await store.listSessions()) {
    let segments: string[];
    try {
      segments = await store.listSegments(sessionId);
    } catch (error) {
      if (NotFoundError.isInstance(error)) continue;
      throw error;
    }
    for (const segmentId of segments) {
      try {
        for await (const batch of store.readFrom({ sessionId, segmentId }, 0, signal ? { signal } : {})) {
          for (const entry of batch) await collectDigests(entry, found, pause);
        }
      } catch (error) {
        if (NotFoundError.isInstance(error)) continue;
        throw error;
      }
    }
  }
  return found;
}

/** Adds every digest in the strings (values and keys) of `value` to `into`, yielding as it goes. */
async function collectDigests(value: unknown, into: Set<string>, pause: Pause): Promise<void> {
  const pending: unknown[] = [value];
  let visited = 0;
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === "string") {
      if (next.includes("sha256:")) for (const [digest] of next.matchAll(DIGEST_IN_TEXT)) into.add(digest);
    } else if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
    } else if (typeof next === "object" && next !== null) {
      for (const [key, item] of Object.entries(next)) pending.push(key, item);
    }
    // A segment_start holds a whole history: one entry can be tens of megabytes of JSON.
    if (++visited % 4096 === 0) await pause();
  }
}
