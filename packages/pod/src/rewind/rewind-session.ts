import { realpath } from "node:fs/promises";
import { type MinimalItem, NotFoundError, type Store } from "@podkit/session-store";
import { PodUsageError } from "../errors.js";
import {
  RewindBlobError,
  RewindPathBlockedError,
  RewindPendingError,
  type RewindRefusal,
  RewindRefusedError,
} from "./errors.js";
import { REWIND_DOMAIN, type RewindRecord } from "./recorded-changes.js";
import {
  type ApplyContext,
  assertNotRunning,
  claimLanded,
  completeRewind,
  isProcessAlive,
  type RewindProgress,
  requireBlobs,
  stageContents,
  undoRewind,
} from "./rewind-apply.js";
import {
  createJournal,
  currentProcess,
  journalPath,
  newRewindId,
  type RewindJournal,
  readJournal,
  removeDeadJournalTemps,
  stagedPath,
} from "./rewind-journal.js";
import { planRewind, type RewindFileReport, type RewindPlan } from "./rewind-plan.js";
import { newSegmentId } from "./segment-id.js";
import { missingParents } from "./workspace-files.js";

/** What `rewindSession` is asked to do. */
export interface RewindOptions<TItem = MinimalItem> {
  /** The store holding the session and the blobs of its files (any machine's, e.g. PostgreSQL). */
  store: Store<TItem>;
  sessionId: string;
  /** The last turn to keep (0: before the first). */
  toTurn: number;
  /** The directory the session's recorded paths are relative to (the pod's workspace). */
  workspace: string;
  /** Restore the files only; the conversation stays where it is. */
  filesOnly?: boolean;
  /** Rewind the conversation only; the files stay as they are. */
  conversationOnly?: boolean;
  /** Work out and report what would change; write nothing. */
  dryRun?: boolean;
  /** Overwrite files changed outside the pod instead of refusing. */
  force?: boolean;
  /** Stops the rewind before it commits (nothing is left changed); after that it finishes. */
  signal?: AbortSignal;
  /** Told of each step as it is done. */
  onProgress?: (event: RewindProgress) => void;
}

/** An interrupted rewind a later one found and carried out to its end, or undid. */
export interface RewindRecovery {
  outcome: "finished" | "undone";
  toTurn: number;
}

/** What a rewind did (or, in a dry run, would do). */
export interface RewindReport {
  sessionId: string;
  toTurn: number;
  dryRun: boolean;
  conversation: {
    /** `fork`: a new head segment holds turns 1..N; `unchanged`: nothing after turn N; `skipped`: files only. */
    action: "fork" | "unchanged" | "skipped";
    /** The segment the new head is forked from (the newest holding turn N whole). */
    sourceSegmentId?: string;
    /** The session's head after the rewind (absent in a dry run that would fork). */
    headSegmentId?: string;
  };
  files: RewindFileReport[];
  /** Files changed outside the pod that a rewind without `force` refuses to overwrite (dry run). */
  refused?: RewindRefusal[];
  /** An interrupted earlier rewind of the session, carried out or undone first. */
  recovered?: RewindRecovery;
}

/**
 * Takes a session back to the end of turn `toTurn` (docs/rewind.md): the conversation continues
 * in the same session from a new head segment forked after that turn (its prefix byte-identical,
 * so the next request reads the provider's cache; `podkit resume <id>` goes on from there), and
 * every file the session changed after that turn is restored to its content then, from the
 * store's blobs. All or nothing: the new contents are staged and synced beside their targets
 * under a journal, the rewind commits by claiming the session (an entry appended only if no other
 * writer appended since it was read: `SessionBusyError` otherwise, nothing changed), then moves
 * them into place. A rerun after a crash finishes or undoes it first. A file whose content is not
 * what the session last recorded (edited outside the pod) refuses the rewind unless `force`.
 */
export async function rewindSession<TItem = MinimalItem>(
  options: RewindOptions<TItem>,
): Promise<RewindReport> {
  assertOptions(options);
  const { store, sessionId, toTurn } = options;
  const root = await realpath(options.workspace);
  const context: ApplyContext<TItem> = {
    store,
    root,
    force: options.force === true,
    onProgress: options.onProgress,
  };
  await removeDeadJournalTemps(root, sessionId, isProcessAlive);
  const pending = await readJournal(root, sessionId);
  if (pending !== undefined && options.dryRun === true) {
    assertNotRunning(pending, root);
    throw new RewindPendingError({ sessionId, journal: journalPath(root, sessionId), running: false });
  }
  const recovered = pending === undefined ? undefined : await recover(pending, context);
  options.signal?.throwIfAborted();
  const plan = await planRewind({
    store,
    sessionId,
    toTurn,
    root,
    files: options.conversationOnly !== true,
    conversation: options.filesOnly !== true,
  });
  const report: RewindReport = {
    sessionId,
    toTurn,
    dryRun: options.dryRun === true,
    conversation: {
      action: plan.conversation,
      ...(plan.fork === null ? {} : { sourceSegmentId: plan.fork.source.ref.segmentId }),
      ...(plan.fork === null ? { headSegmentId: plan.log.segmentId } : {}),
    },
    files: plan.files,
    ...(recovered === undefined ? {} : { recovered }),
  };
  if (plan.refused.length > 0 && !context.force) {
    if (options.dryRun === true) return { ...report, refused: plan.refused };
    throw new RewindRefusedError(sessionId, plan.refused);
  }
  for (const operation of plan.operations) {
    if (operation.from === "directory")
      throw new RewindPathBlockedError(
        operation.path,
        "a directory stands where the session recorded a file",
      );
  }
  if (options.dryRun === true) {
    await assertContentsStored(store, plan);
    return report;
  }
  if (plan.fork === null && plan.operations.length === 0 && plan.headRecord.length === 0) return report;
  if (plan.operations.some((operation) => operation.to !== null)) requireBlobs(store);
  options.signal?.throwIfAborted();
  const journal = await journalFor(plan, root);
  if (!(await createJournal(root, journal))) {
    // Another rewind of the session published its journal since this one looked.
    const other = await readJournal(root, sessionId);
    if (other !== undefined) assertNotRunning(other, root);
    throw new RewindPendingError({ sessionId, journal: journalPath(root, sessionId), running: false });
  }
  options.onProgress?.({ step: "journaled" });
  await commit(plan, journal, context, options.signal);
  await completeRewind(journal, context);
  if (journal.fork !== null) report.conversation.headSegmentId = journal.fork.segmentId;
  return report;
}

/**
 * Finishes or undoes the rewind of `sessionId` a crash interrupted (its journal is in the
 * workspace): finished when it had committed (its claim is in the log), else undone — the
 * workspace ends fully rewound or as it was. Undefined when there is none.
 */
export async function recoverRewind<TItem = MinimalItem>(options: {
  store: Store<TItem>;
  sessionId: string;
  workspace: string;
  force?: boolean;
  onProgress?: (event: RewindProgress) => void;
}): Promise<RewindRecovery | undefined> {
  const root = await realpath(options.workspace);
  await removeDeadJournalTemps(root, options.sessionId, isProcessAlive);
  const journal = await readJournal(root, options.sessionId);
  if (journal === undefined) return undefined;
  return recover(journal, {
    store: options.store,
    root,
    force: options.force === true,
    onProgress: options.onProgress,
  });
}

async function recover<TItem>(journal: RewindJournal, context: ApplyContext<TItem>): Promise<RewindRecovery> {
  assertNotRunning(journal, context.root);
  if (!(await claimLanded(context.store, journal))) {
    await undoRewind(journal, context.root);
    return { outcome: "undone", toTurn: journal.toTurn };
  }
  await completeRewind(journal, context);
  return { outcome: "finished", toTurn: journal.toTurn };
}

/**
 * Stages the new contents, then claims the session. Anything failing before the claim landed
 * undoes the staging; a claim whose outcome is unknown (the store failed while answering) is
 * looked up, and when even that fails the journal stays for the rerun to decide.
 */
async function commit<TItem>(
  plan: RewindPlan<TItem>,
  journal: RewindJournal,
  context: ApplyContext<TItem>,
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    await stageContents(journal, context, signal);
    signal?.throwIfAborted();
  } catch (error) {
    await undoRewind(journal, context.root);
    throw error;
  }
  try {
    await plan.log.append(journal.claim.entry, { ifUnchanged: true });
  } catch (error) {
    const landed = await claimLanded(context.store, journal).catch(() => {
      throw error;
    });
    if (!landed) {
      await undoRewind(journal, context.root);
      throw error;
    }
  }
  context.onProgress?.({ step: "claimed" });
}

/** The journal of `plan`: every operation with its staged file, the claim, the fork. */
async function journalFor<TItem>(plan: RewindPlan<TItem>, root: string): Promise<RewindJournal> {
  const rewindId = newRewindId();
  const createdDirs: string[] = [];
  for (const operation of plan.operations) {
    if (operation.action !== "write") continue;
    for (const dir of await missingParents(root, operation.path))
      if (!createdDirs.includes(dir)) createdDirs.push(dir);
  }
  const segmentId = plan.fork === null ? null : newSegmentId();
  const record = (changes: RewindRecord["changes"]): RewindRecord => ({
    rewind_id: rewindId,
    to_turn: plan.toTurn,
    changes,
  });
  return {
    version: 1,
    rewindId,
    sessionId: plan.sessionId,
    toTurn: plan.toTurn,
    ...currentProcess(),
    claim: {
      segmentId: plan.log.segmentId,
      index: plan.log.entryCount,
      entry: {
        kind: "extension",
        ts: Math.max(Date.now(), plan.headLastTs),
        domain: REWIND_DOMAIN,
        payload: { ...record(plan.headRecord), segment_id: segmentId },
      },
    },
    fork:
      plan.fork === null || segmentId === null
        ? null
        : {
            sourceSegmentId: plan.fork.source.ref.segmentId,
            atTurn: plan.toTurn,
            segmentId,
            carried: [
              ...plan.fork.carried,
              ...(plan.forkRecord.length === 0
                ? []
                : [{ domain: REWIND_DOMAIN, payload: record(plan.forkRecord) }]),
            ],
          },
    operations: plan.operations.map((operation, index) => ({
      path: operation.path,
      action: operation.action,
      from: operation.from,
      to: operation.to,
      temp: operation.action === "write" ? stagedPath(operation.path, rewindId, index) : null,
      mode: operation.mode,
    })),
    createdDirs,
  };
}

/** A dry run checks that the store still has every content the rewind would write. */
async function assertContentsStored<TItem>(store: Store<TItem>, plan: RewindPlan<TItem>): Promise<void> {
  const writes = plan.operations.filter((operation) => operation.to !== null);
  if (writes.length === 0) return;
  const blobs = requireBlobs(store);
  for (const { path, to } of writes) {
    const digest = to as string;
    if (!(await blobs.has(digest)))
      throw new RewindBlobError({
        path,
        digest,
        cause: new NotFoundError({ what: "blob", id: digest, where: "the session store" }),
      });
  }
}

function assertOptions<TItem>(options: RewindOptions<TItem>): void {
  if (!Number.isSafeInteger(options.toTurn) || options.toTurn < 0) {
    throw new PodUsageError(
      `cannot rewind to turn ${String(options.toTurn)}: give a turn number (0 or more)`,
    );
  }
  if (options.filesOnly === true && options.conversationOnly === true) {
    throw new PodUsageError(
      "a rewind with filesOnly and conversationOnly would do nothing: give one of them at most",
    );
  }
}
