import { z } from "zod";
import { deleteStaging } from "../extract/staging.js";
import { type MemoryPaths, RECORD_KINDS, recordFile, recordLabel, SUMMARY_SLUG } from "../records/layout.js";
import { slugProblem } from "../records/slug.js";
import { type AuditRecord, contentHash, readAuditLog } from "../store/audit-log.js";
import { withContainedDir, withExistingDir } from "../store/contained-dir.js";
import { podkitRoot, readContained } from "../store/contained-read.js";
import { appendJsonLine } from "../store/jsonl-log.js";
import { bumpMemoryStamp, type RecordWrite, withAuditLog, writeRecordFile } from "../store/record-writes.js";

/**
 * `_staging/.consolidation.journal.json`: what a consolidation run decided to write, saved whole
 * before the first record is written (a redo log). A run killed while it writes records or
 * deletes staging leaves it behind; the next run holding the lock finishes it — writes what is
 * missing, deletes the consumed staging — instead of integrating that staging a second time.
 */
const JOURNAL_NAME = ".consolidation.journal.json";
const JOURNAL_MAX_BYTES = 64 * 1024 * 1024;

const AuditSchema = z.object({
  ts: z.string(),
  op: z.enum(["create", "write", "edit", "delete"]),
  kind: z.enum(RECORD_KINDS),
  slug: z.string(),
  status: z.enum(["applied", "rejected"]),
  before_hash: z.string().nullable(),
  after_hash: z.string().nullable(),
  reason: z.string(),
  run_id: z.string().optional(),
});

const JournalSchema = z.object({
  run_id: z.string(),
  staging_ids: z.array(z.string()),
  changes: z.array(
    z
      .object({
        kind: z.enum(RECORD_KINDS),
        slug: z.string(),
        text: z.string().nullable(),
        audit: AuditSchema,
      })
      // The file a change goes to is derived from kind and slug: a slug must stay a file name.
      .refine((c) => (c.kind === "summary" ? c.slug === SUMMARY_SLUG : slugProblem(c.slug) === undefined), {
        error: "not a valid slug",
      }),
  ),
});
export type CommitJournal = z.infer<typeof JournalSchema>;

/** Saves the journal of a run about to write its changes (atomically, inside `.podkit`). */
export async function writeJournal(paths: MemoryPaths, journal: CommitJournal): Promise<void> {
  await withContainedDir(paths.workspace, paths.stagingDir, (dir) =>
    dir.writeAtomic(JOURNAL_NAME, JSON.stringify(journal)),
  );
}

/** The journal a run left behind; `invalid` when it cannot be trusted (it is then moved aside). */
export async function readJournal(
  paths: MemoryPaths,
): Promise<CommitJournal | { invalid: string } | undefined> {
  const bytes = await withExistingDir(paths.workspace, paths.stagingDir, (dir) =>
    dir.read(JOURNAL_NAME, JOURNAL_MAX_BYTES),
  );
  if (bytes === undefined) return undefined;
  try {
    return JournalSchema.parse(JSON.parse(bytes.toString("utf8")));
  } catch (error) {
    return { invalid: String((error as Error).message).split("\n")[0] ?? "unreadable" };
  }
}

/** Removes the journal: the run it describes is complete. */
export async function removeJournal(paths: MemoryPaths): Promise<void> {
  await withExistingDir(paths.workspace, paths.stagingDir, (dir) => dir.remove(JOURNAL_NAME));
}

/** Moves an untrustworthy journal aside for a person to look at. */
export async function setJournalAside(paths: MemoryPaths): Promise<string> {
  const aside = `${JOURNAL_NAME}.invalid-${Date.now()}`;
  await withExistingDir(paths.workspace, paths.stagingDir, (dir) => dir.rename(JOURNAL_NAME, aside));
  return aside;
}

/** What finishing a journal did. */
export interface JournalOutcome {
  readonly runId: string;
  readonly stagingIds: readonly string[];
  /** Changes written now (the run had not reached them). */
  readonly written: number;
  /** Records changed by someone since the run read them: left as they are. */
  readonly skipped: readonly string[];
  /** The audit records of the changes now on disk. */
  readonly applied: readonly AuditRecord[];
}

/**
 * Writes every change of `journal` (in order) and deletes its staging — idempotently: a record
 * already holding the journal's text is not written again and an audit line already logged is
 * not logged twice; a record someone changed since (neither the text before nor the text after)
 * is left alone and reported. Used for a run's own commit and for finishing a dead run's.
 */
export async function applyJournal(
  paths: MemoryPaths,
  journal: CommitJournal,
  options: { resume?: boolean; beforeStagingDeleted?: () => Promise<void> } = {},
): Promise<JournalOutcome> {
  // Only a resumed journal can have audit lines logged already; a fresh commit need not read the log.
  const logged = new Set(options.resume === true ? (await readAuditLog(paths)).map(auditKey) : []);
  const root = await podkitRoot(paths.workspace);
  // A record changed several times in one run is judged once: by the text before its first change
  // and after its last, and written once, with its final text.
  const byRecord = new Map<string, RecordWrite[]>();
  for (const change of journal.changes as RecordWrite[]) {
    const key = `${change.kind}/${change.slug}`;
    byRecord.set(key, [...(byRecord.get(key) ?? []), change]);
  }
  let written = 0;
  const skipped: string[] = [];
  const applied: AuditRecord[] = [];
  await withAuditLog(paths, async (audit) => {
    for (const group of byRecord.values()) {
      const first = group[0] as RecordWrite;
      const last = group.at(-1) as RecordWrite;
      const label = recordLabel(first.kind, first.slug);
      const read = await readContained(recordFile(paths, first.kind, first.slug), root, label);
      const current = read?.ok === true ? contentHash(read.text) : read === undefined ? null : "(unreadable)";
      if (current !== last.audit.after_hash && current !== first.audit.before_hash) {
        skipped.push(label);
        continue;
      }
      if (current !== last.audit.after_hash) {
        await writeRecordFile(paths, last.kind, last.slug, last.text);
        written += 1;
      }
      for (const change of group) {
        applied.push(change.audit);
        if (!logged.has(auditKey(change.audit))) await audit(change.audit);
      }
    }
  });
  if (written > 0) await bumpMemoryStamp(paths);
  await appendJsonLine(paths.workspace, paths.consumedLog, {
    ts: new Date().toISOString(),
    run_id: journal.run_id,
    staging_ids: journal.staging_ids,
  });
  await options.beforeStagingDeleted?.();
  await deleteStaging(paths, journal.staging_ids);
  return { runId: journal.run_id, stagingIds: journal.staging_ids, written, skipped, applied };
}

const auditKey = (a: AuditRecord) =>
  JSON.stringify([a.run_id ?? "", a.ts, a.op, a.kind, a.slug, a.after_hash, a.status]);
