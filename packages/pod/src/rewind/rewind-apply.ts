import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { isDeepStrictEqual } from "node:util";
import { blobDigest, describeSession, SessionLog, type Store } from "@podkit/session-store";
import { PodUsageError } from "../errors.js";
import {
  RewindBlobError,
  RewindPathBlockedError,
  RewindPendingError,
  type RewindRefusal,
  RewindRefusedError,
} from "./errors.js";
import { journalPath, type RewindJournal, removeJournal } from "./rewind-journal.js";
import { holds } from "./rewind-plan.js";
import {
  createDirectories,
  inspectPath,
  moveIntoPlace,
  parentOf,
  presenceLabel,
  readStaged,
  removeEmptyDirectories,
  removeFile,
  syncDirectories,
  writeStaged,
} from "./workspace-files.js";

/** Where a rewind is; reported synchronously as each step is done (and by tests, to stop there). */
export type RewindProgress =
  | { step: "journaled" }
  | { step: "staged"; path: string }
  | { step: "claimed" }
  | { step: "applied"; path: string }
  | { step: "forked"; segmentId: string }
  | { step: "done" };

/** What carrying out a journal needs. */
export interface ApplyContext<TItem> {
  store: Store<TItem>;
  root: string;
  force: boolean;
  onProgress?: ((event: RewindProgress) => void) | undefined;
}

/** The bytes of `digest` from the store's blobs (verified by the store), for `path`. */
export async function fetchContent<TItem>(
  store: Store<TItem>,
  path: string,
  digest: string,
): Promise<Uint8Array> {
  const blobs = requireBlobs(store);
  try {
    return await blobs.get(digest);
  } catch (error) {
    throw new RewindBlobError({ path, digest, cause: error });
  }
}

export function requireBlobs<TItem>(store: Store<TItem>): NonNullable<Store<TItem>["blobs"]> {
  if (store.blobs === undefined) {
    throw new PodUsageError("this session store keeps no blobs, so it holds no file contents to rewind to", {
      hint: "rewind with --conversation-only, or use a store with blobs (the filesystem store, @podkit/store-postgres)",
    });
  }
  return store.blobs;
}

/**
 * Stages every new content next to its target (the directories it needs created first), each
 * synced. Before the claim: nothing the workspace had is touched yet.
 */
export async function stageContents<TItem>(
  journal: RewindJournal,
  context: ApplyContext<TItem>,
  signal: AbortSignal | undefined,
): Promise<void> {
  await createDirectories(context.root, journal.createdDirs);
  for (const operation of journal.operations) {
    signal?.throwIfAborted();
    if (operation.action !== "write" || operation.temp === null || operation.to === null) continue;
    const bytes = await fetchContent(context.store, operation.path, operation.to);
    await writeStaged(context.root, operation.temp, bytes, operation.mode);
    context.onProgress?.({ step: "staged", path: operation.path });
  }
}

/** True when the log holds the journal's claim: the rewind committed. */
export async function claimLanded<TItem>(store: Store<TItem>, journal: RewindJournal): Promise<boolean> {
  const { claim } = journal;
  const ref = { sessionId: journal.sessionId, segmentId: claim.segmentId };
  for await (const batch of store.readFrom(ref, claim.index)) {
    const entry = batch[0];
    if (entry === undefined || entry.kind !== "extension") return false;
    return isDeepStrictEqual(
      { kind: entry.kind, ts: entry.ts, domain: entry.domain, payload: entry.payload },
      claim.entry,
    );
  }
  return false;
}

/** Undoes a rewind that did not commit: removes what it staged and the journal. */
export async function undoRewind(journal: RewindJournal, root: string): Promise<void> {
  for (const operation of journal.operations)
    if (operation.temp !== null) await removeFile(root, operation.temp);
  await removeEmptyDirectories(root, journal.createdDirs);
  await removeJournal(root, journal.sessionId);
}

/**
 * Carries out a committed rewind to its end, from wherever it stopped: each file is made to hold
 * its new content (already there: skipped; staged: renamed into place; staging lost: staged again
 * from the blobs) or removed, the directories synced, the new head segment created (and what it
 * starts with appended) unless it exists, and the journal removed. A file that holds neither what
 * the rewind found nor what it writes was changed since: `RewindRefusedError` unless `force`, and
 * the journal stays for the rerun.
 */
export async function completeRewind<TItem>(
  journal: RewindJournal,
  context: ApplyContext<TItem>,
): Promise<void> {
  const { root } = context;
  const currents = [];
  const conflicts: RewindRefusal[] = [];
  for (const operation of journal.operations) {
    const current = await inspectPath(root, operation.path);
    currents.push(current);
    if (holds(current, operation.to)) continue;
    if (current.kind === "directory")
      throw new RewindPathBlockedError(operation.path, "a directory stands where the rewind restores a file");
    const label = presenceLabel(current);
    if (label !== operation.from)
      conflicts.push({
        path: operation.path,
        recorded: operation.from === null || operation.from.startsWith("sha256:") ? operation.from : null,
        current: label as RewindRefusal["current"],
      });
  }
  if (conflicts.length > 0 && !context.force) throw new RewindRefusedError(journal.sessionId, conflicts);
  for (const [index, operation] of journal.operations.entries()) {
    const current = currents[index] as (typeof currents)[number];
    if (holds(current, operation.to)) {
      if (operation.temp !== null) await removeFile(root, operation.temp);
    } else if (operation.action === "delete" || operation.temp === null || operation.to === null) {
      await removeFile(root, operation.path);
    } else {
      const staged = await readStaged(root, operation.temp);
      if (staged === undefined || (await blobDigest(staged)) !== operation.to) {
        await removeFile(root, operation.temp);
        const bytes = await fetchContent(context.store, operation.path, operation.to);
        await createDirectories(root, journal.createdDirs);
        await writeStaged(root, operation.temp, bytes, operation.mode);
      }
      await moveIntoPlace(root, operation.temp, operation.path);
    }
    context.onProgress?.({ step: "applied", path: operation.path });
  }
  await syncDirectories(
    root,
    journal.operations.map((operation) => parentOf(operation.path)),
  );
  if (journal.fork !== null) {
    await ensureFork(journal, context.store);
    context.onProgress?.({ step: "forked", segmentId: journal.fork.segmentId });
  }
  await removeJournal(root, journal.sessionId);
  context.onProgress?.({ step: "done" });
}

/**
 * Creates the journal's new head segment unless it exists — `SessionLog.forkAt`, the one owner of
 * a fork within a session, with the id the journal chose and a `ts` after every entry of the
 * session so the head rule picks it — then appends the entries it starts with that are missing.
 */
async function ensureFork<TItem>(journal: RewindJournal, store: Store<TItem>): Promise<void> {
  const fork = journal.fork as NonNullable<RewindJournal["fork"]>;
  const { sessionId } = journal;
  if (!(await store.listSegments(sessionId)).includes(fork.segmentId)) {
    const ts = await afterEverything(store, sessionId);
    await SessionLog.forkAt(store, fork.sourceSegmentId, fork.atTurn, {
      newId: () => fork.segmentId,
      now: () => ts,
    });
  }
  if (fork.carried.length === 0) return;
  const ref = { sessionId, segmentId: fork.segmentId };
  const have = [];
  for await (const batch of store.readFrom(ref, 1)) have.push(...batch);
  const carriedSoFar = have.every((entry, index) => {
    const carried = fork.carried[index];
    return (
      carried !== undefined &&
      entry.kind === "extension" &&
      entry.domain === carried.domain &&
      isDeepStrictEqual(entry.payload, carried.payload)
    );
  });
  // Written to since (resumed before this rerun): it goes on as it is.
  if (!carriedSoFar || have.length >= fork.carried.length) return;
  const log = await SessionLog.openSegment(store, ref);
  const ts = await afterEverything(store, sessionId);
  await log.appendMany(
    fork.carried
      .slice(have.length)
      .map(({ domain, payload }) => ({ kind: "extension" as const, ts, domain, payload })),
  );
}

/** A `ts` later than every entry of the session, and not before now. */
export async function afterEverything<TItem>(store: Store<TItem>, sessionId: string): Promise<number> {
  const overview = await describeSession(store, sessionId);
  const segments = [overview.head, ...overview.otherBranches, ...overview.compacted];
  return Math.max(Date.now(), ...segments.map((segment) => segment.lastEntryAt + 1));
}

/** Refuses to touch a journal whose rewind is still running in a live process on this machine. */
export function assertNotRunning(journal: RewindJournal, root: string): void {
  if (journal.host !== hostname() || journal.pid === process.pid || !isProcessAlive(journal.pid)) return;
  throw new RewindPendingError({
    sessionId: journal.sessionId,
    journal: journalPath(root, journal.sessionId),
    running: true,
    pid: journal.pid,
  });
}

/** Alive unless the OS says no such process (a zombie — killed, not yet reaped — is dead). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as { code?: unknown }).code !== "ESRCH";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.charAt(stat.lastIndexOf(")") + 2) !== "Z";
  } catch {
    return true;
  }
}
