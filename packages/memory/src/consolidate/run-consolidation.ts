import { MEMORY_DEFAULTS } from "@podkit/manifest";
import { v7 as uuidv7 } from "uuid";
import { deleteStaging, listStaging, readStaging } from "../extract/staging.js";
import { memoryPaths } from "../records/layout.js";
import type { AuditRecord } from "../store/audit-log.js";
import { MemoryStore } from "../store/memory-store.js";
import { usageReport } from "../store/usage-log.js";
import { consolidationTools } from "../tools/memory-tools.js";
import { runDisposableWorker } from "../worker/disposable-worker.js";
import type { MemoryJobOptions } from "../worker/memory-model.js";
import { type KnowledgeCandidate, knowledgeCandidates } from "./candidate-report.js";
import { renderConsolidationInput } from "./consolidation-input.js";
import { ConsolidationLock, type LockInfo } from "./consolidation-lock.js";
import { commitMemoryChanges, type GitCommitOutcome } from "./git-commit.js";
import { tidyHints } from "./tidy-hints.js";

export interface RunMemoryConsolidationOptions extends MemoryJobOptions {
  /** Run when staging holds at least this many files (default 8) … */
  readonly thresholdFiles?: number;
  /** … or at least this many bytes (default 65536). */
  readonly thresholdBytes?: number;
  /** Ignore the thresholds (`podkit memory consolidate`): run whenever staging is not empty. */
  readonly force?: boolean;
  /** `[memory] git_commit`: commit the memory trees after a successful run. */
  readonly gitCommit?: boolean;
  /** Requests the consolidation worker may make (default 60). */
  readonly maxRequests?: number;
  /** Characters of decisions and requests given to the worker in full (default 400,000). */
  readonly fullTextBudget?: number;
  /** Called once the lock is held and the worker is about to start (progress display). */
  readonly onStart?: () => void;
}

export type MemoryConsolidationResult =
  | { status: "below_threshold"; files: number; bytes: number }
  | { status: "lock_in_use"; holder: LockInfo }
  /** Every staging file due was unreadable or invalid; they are left in place for a person to look at. */
  | { status: "invalid_staging"; invalidStaging: { file: string; problem: string }[] }
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
      git?: GitCommitOutcome;
    };

/**
 * Consolidation: past a threshold, take the cross-process lock recording the staging
 * ids consumed, give a disposable worker the consolidation input and the six memory tools, and
 * on success write its changes (each linted, atomic, audited), delete only the consumed staging
 * files, then the lock. On failure nothing is written, staging stays, the lock is removed, and
 * the error (`MemoryWorkerError`) is thrown. Another live run holding the lock → `lock_in_use`.
 */
export async function runMemoryConsolidation(
  options: RunMemoryConsolidationOptions,
): Promise<MemoryConsolidationResult> {
  const paths = memoryPaths(options.workspace);
  const clock = options.clock ?? (() => new Date());
  const staging = await listStaging(paths);
  const bytes = staging.reduce((n, f) => n + f.bytes, 0);
  const files = staging.length;
  const due =
    files > 0 &&
    (options.force === true ||
      files >= (options.thresholdFiles ?? MEMORY_DEFAULTS.consolidation_threshold_files) ||
      bytes >= (options.thresholdBytes ?? MEMORY_DEFAULTS.consolidation_threshold_bytes));
  if (!due) return { status: "below_threshold", files, bytes };

  const attempt = await ConsolidationLock.acquire(
    paths.lockFile,
    staging.map((f) => f.id),
    clock(),
  );
  if (!attempt.acquired) return { status: "lock_in_use", holder: attempt.holder };
  const { lock } = attempt;
  try {
    const { entries, invalid } = await readStaging(paths, staging);
    if (entries.length === 0) return { status: "invalid_staging", invalidStaging: invalid };
    const runId = uuidv7();
    const candidates = knowledgeCandidates(entries);
    const store = await MemoryStore.open(options.workspace, {
      clock,
      runId,
      by: "consolidation",
      recordUsage: false,
      deferred: true,
      sourceRules: {
        given: entries.map((e) => e.source),
        knowledgeCandidates: candidates.flatMap((c) => c.sources),
      },
    });
    const lint = await store.lintAtOpen();
    const input = renderConsolidationInput({
      staging: entries,
      summary: store.get("summary", "summary"),
      decisions: store.list("decision"),
      requests: store.list("request"),
      usage: await usageReport(paths.usageLog),
      hints: tidyHints(store.list(), lint.warnings),
      candidates,
      ...(options.fullTextBudget === undefined ? {} : { fullTextBudget: options.fullTextBudget }),
    });
    options.onStart?.();
    await runDisposableWorker("consolidate", options, {
      systemPrompt: options.prompts.render("memory_consolidation_system", { language: options.language }),
      tools: consolidationTools(store),
      input,
      maxRequests: options.maxRequests ?? 60,
    });
    const changes = await store.commit();
    const consumed = entries.map((e) => e.id);
    await deleteStaging(paths, consumed);
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
      ...(git === undefined ? {} : { git }),
    };
  } finally {
    await lock.release();
  }
}
