import { MEMORY_DEFAULTS } from "@podkit/manifest";
import { v7 as uuidv7 } from "uuid";
import { MemoryWorkerError } from "../errors.js";
import { listStaging, readStaging, type StagingFile } from "../extract/staging.js";
import { memoryPaths } from "../records/layout.js";
import type { AuditRecord } from "../store/audit-log.js";
import { MemoryStore } from "../store/memory-store.js";
import { PROTECTION_THRESHOLD, usageReport } from "../store/usage-log.js";
import { consolidationTools } from "../tools/memory-tools.js";
import { disposableWorker } from "../worker/disposable-worker.js";
import type { MemoryJobOptions } from "../worker/memory-model.js";
import { type Backoff, backoffFor, clearFailures, recordFailure } from "./backoff.js";
import { type KnowledgeCandidate, knowledgeCandidates } from "./candidate-report.js";
import {
  applyJournal,
  type JournalOutcome,
  readJournal,
  removeJournal,
  setJournalAside,
  writeJournal,
} from "./commit-journal.js";
import { renderConsolidationInput } from "./consolidation-input.js";
import { ConsolidationLock, type LockInfo } from "./consolidation-lock.js";
import { commitMemoryChanges, type GitCommitOutcome } from "./git-commit.js";
import { provenanceOf, stagedItems } from "./staged-items.js";
import { tidyHints } from "./tidy-hints.js";

export interface RunMemoryConsolidationOptions extends MemoryJobOptions {
  /** Run when staging holds at least this many files (default 8) … */
  readonly thresholdFiles?: number;
  /** … or at least this many bytes (default 65536). */
  readonly thresholdBytes?: number;
  /** Ignore the thresholds and any back-off (`podkit memory consolidate`): run whenever staging is not empty. */
  readonly force?: boolean;
  /** `[memory] git_commit`: commit the memory trees after a successful run. */
  readonly gitCommit?: boolean;
  /** Requests the integration step may make (default 40). */
  readonly maxRequests?: number;
  /** Requests the tidy step may make (default 20); running out keeps the integration. */
  readonly tidyMaxRequests?: number;
  /** Characters of decisions and requests given to the worker in full (default 400,000). */
  readonly fullTextBudget?: number;
  /** Called once the lock is held and the worker is about to start (progress display). */
  readonly onStart?: () => void;
}

/** How the tidy step ended: its changes are kept only when it finished. */
export type TidyOutcome = { status: "done" } | { status: "incomplete"; reason: string };

/** A dead run's journal finished by this run (see `applyJournal`). */
export type Recovered = JournalOutcome;

export type MemoryConsolidationResult =
  | { status: "below_threshold"; files: number; bytes: number; recovered?: Recovered }
  | { status: "lock_in_use"; holder: LockInfo }
  /** The same staging failed before; the next attempt waits until `retryAt` (or `force`). */
  | ({ status: "backing_off"; recovered?: Recovered } & Backoff)
  /** Every staging file due was unreadable or invalid; they are left in place for a person to look at. */
  | { status: "invalid_staging"; invalidStaging: { file: string; problem: string }[]; recovered?: Recovered }
  | {
      status: "consolidated";
      runId: string;
      /** Staging ids consumed (and deleted). */
      consumed: string[];
      /** One audit record per change written. */
      changes: AuditRecord[];
      candidates: KnowledgeCandidate[];
      /** Staging files that could not be read; left in place. */
      invalidStaging: { file: string; problem: string }[];
      tidy: TidyOutcome;
      /** Records a person changed while the run worked: left as they are, the run's change dropped. */
      skipped: readonly string[];
      recovered?: Recovered;
      git?: GitCommitOutcome;
    };

/** Test seams of the crash tests: awaited at the named point of a run (records written, staging not yet deleted). */
export interface ConsolidationInternals {
  readonly beforeStagingDeleted?: () => Promise<void>;
}

const isDue = (staging: readonly StagingFile[], options: RunMemoryConsolidationOptions) => {
  const bytes = staging.reduce((n, f) => n + f.bytes, 0);
  const files = staging.length;
  return {
    files,
    bytes,
    due:
      files > 0 &&
      (options.force === true ||
        files >= (options.thresholdFiles ?? MEMORY_DEFAULTS.consolidation_threshold_files) ||
        bytes >= (options.thresholdBytes ?? MEMORY_DEFAULTS.consolidation_threshold_bytes)),
  };
};

/**
 * Consolidation: past a threshold, take the cross-process lock recording the staging
 * ids consumed, give a disposable worker the consolidation input and the six memory tools for
 * the integration step, then — in the same conversation — the tidy step. A tidy step that fails
 * or runs out of requests is dropped and reported (`tidy: incomplete`); the integration is kept.
 * The changes are journaled, then written (each linted, atomic, audited), then only the consumed
 * staging files are deleted, then the journal and the lock. A run killed in between is finished
 * by the next one from the journal, so no staging is integrated twice. An integration failure
 * writes nothing, keeps staging, counts against it (the next automatic run backs off) and throws
 * `MemoryWorkerError`. Another live run holding the lock → `lock_in_use`.
 */
export async function runMemoryConsolidation(
  options: RunMemoryConsolidationOptions,
  internals: ConsolidationInternals = {},
): Promise<MemoryConsolidationResult> {
  const paths = memoryPaths(options.workspace);
  const clock = options.clock ?? (() => new Date());
  let staging = await listStaging(paths);
  let due = isDue(staging, options);
  const leftover = await readJournal(paths);
  if (!due.due && leftover === undefined)
    return { status: "below_threshold", files: due.files, bytes: due.bytes };

  const attempt = await ConsolidationLock.acquire(
    options.workspace,
    paths.lockFile,
    staging.map((f) => f.id),
    clock(),
  );
  if (!attempt.acquired) return { status: "lock_in_use", holder: attempt.holder };
  const { lock } = attempt;
  try {
    let recovered: Recovered | undefined;
    const journal = await readJournal(paths);
    if (journal !== undefined && "invalid" in journal) {
      const aside = await setJournalAside(paths);
      throw new MemoryWorkerError(
        "consolidate",
        `a consolidation journal could not be read (${journal.invalid}); it was moved to ${aside} for a person to look at`,
      );
    }
    if (journal !== undefined) {
      recovered = await applyJournal(paths, journal, { resume: true });
      await removeJournal(paths);
      await clearFailures(paths, journal.staging_ids);
      staging = await listStaging(paths);
      due = isDue(staging, options);
    }
    const withRecovered = recovered === undefined ? {} : { recovered };
    if (!due.due) return { status: "below_threshold", files: due.files, bytes: due.bytes, ...withRecovered };
    if (options.force !== true) {
      const backoff = await backoffFor(
        paths,
        staging.map((f) => f.id),
        clock(),
      );
      if (backoff !== undefined) return { status: "backing_off", ...backoff, ...withRecovered };
    }

    const { entries, invalid } = await readStaging(paths, staging);
    if (entries.length === 0) return { status: "invalid_staging", invalidStaging: invalid, ...withRecovered };
    const consumed = entries.map((e) => e.id);
    const runId = uuidv7();
    const items = stagedItems(entries);
    const candidates = knowledgeCandidates(items);
    const store = await MemoryStore.open(options.workspace, {
      clock,
      runId,
      by: "consolidation",
      recordUsage: false,
      deferred: true,
      provenance: provenanceOf(
        items,
        candidates.flatMap((c) => c.items.map((item) => item.id)),
      ),
    });
    const lint = await store.lintAtOpen();
    const input = renderConsolidationInput(options.prompts, {
      staging: entries,
      items,
      summary: store.get("summary", "summary"),
      decisions: store.list("decision"),
      requests: store.list("request"),
      usage: await usageReport(paths),
      hints: tidyHints(store.list(), lint.warnings),
      candidates,
      ...(options.fullTextBudget === undefined ? {} : { fullTextBudget: options.fullTextBudget }),
    });
    options.onStart?.();
    const worker = disposableWorker("consolidate", options, {
      systemPrompt: options.prompts.render("memory_consolidation_system", { language: options.language }),
      tools: consolidationTools(store),
    });
    try {
      await worker.run(input, options.maxRequests ?? 40);
    } catch (error) {
      throw await failed(options, consumed, error, clock());
    }
    const tidy = await tidyStep(options, store, worker);

    await writeJournal(paths, { run_id: runId, staging_ids: consumed, changes: [...store.pendingWrites] });
    const applied = await applyJournal(
      paths,
      { run_id: runId, staging_ids: consumed, changes: [...store.pendingWrites] },
      internals.beforeStagingDeleted === undefined
        ? {}
        : { beforeStagingDeleted: internals.beforeStagingDeleted },
    );
    await removeJournal(paths);
    await clearFailures(paths, consumed);
    const changes = [...applied.applied];
    const git =
      options.gitCommit === true
        ? await commitMemoryChanges(options.workspace, changes, options.signal)
        : undefined;
    return {
      status: "consolidated",
      runId,
      consumed,
      changes,
      candidates,
      invalidStaging: invalid,
      tidy,
      skipped: applied.skipped,
      ...withRecovered,
      ...(git === undefined ? {} : { git }),
    };
  } finally {
    await lock.release();
  }
}

/**
 * The tidy step, after the integration in the same conversation. Its changes are kept only
 * when it finishes: a step out of requests (or failing) is rolled back and reported.
 */
async function tidyStep(
  options: RunMemoryConsolidationOptions,
  store: MemoryStore,
  worker: ReturnType<typeof disposableWorker>,
): Promise<TidyOutcome> {
  const mark = store.checkpoint();
  store.tidying = true;
  try {
    await worker.run(
      options.prompts.render("memory_consolidation_tidy", { protection_threshold: PROTECTION_THRESHOLD }),
      options.tidyMaxRequests ?? 20,
    );
    return { status: "done" };
  } catch (error) {
    store.rollbackTo(mark);
    return { status: "incomplete", reason: (error as Error).message };
  } finally {
    store.tidying = false;
  }
}

/** Counts a failed integration against its staging (unless the run was aborted) and says when the next try is. */
async function failed(
  options: RunMemoryConsolidationOptions,
  consumed: readonly string[],
  error: unknown,
  now: Date,
): Promise<unknown> {
  if (options.signal?.aborted === true || !MemoryWorkerError.isInstance(error)) return error;
  const backoff = await recordFailure(memoryPaths(options.workspace), consumed, error.message, now);
  return new MemoryWorkerError(
    "consolidate",
    `${error.message}; nothing of this run was kept, the staging stays (failure ${backoff.failures} on it: the next automatic run waits until ${backoff.retryAt.toISOString()})`,
    { cause: error },
  );
}
