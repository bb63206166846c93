import {
  MemoryEditError,
  MemoryError,
  MemoryFileRefusedError,
  MemoryLintError,
  MemoryRecordNotFoundError,
} from "../errors.js";
import { type LintDiagnostic, type LintReport, toReport } from "../lint/diagnostics.js";
import {
  lintChange,
  lintTreeYielding,
  type MemoryChange,
  type RecordLint,
  recordKey,
} from "../lint/lint-memory.js";
import { hasLoneSurrogate, lintRecord, type ParsedRecord } from "../lint/lint-record.js";
import { joinRecord, splitRecord } from "../records/frontmatter.js";
import {
  type MemoryPaths,
  memoryPaths,
  type RecordKind,
  recordLabel,
  SUMMARY_SLUG,
} from "../records/layout.js";
import { formatTimestamp, isRfc3339Utc } from "../records/record-schema.js";
import { type AuditRecord, appendAudit, contentHash } from "./audit-log.js";
import { MEMORY_FILE_MAX_BYTES } from "./contained-read.js";
import { loadMemoryFiles } from "./load-memory-files.js";
import { loopYielder } from "./loop-yield.js";
import { protectionProblem, type UsedCounts } from "./protection.js";
import { attachProvenance, type ChangeOrigin, type Provenance } from "./provenance.js";
import { bumpMemoryStamp, persistRecordWrite, type RecordWrite } from "./record-writes.js";
import { appendUsage, usageReport } from "./usage-log.js";

/** Options of a memory store: the clock of timestamps, who is writing, and consolidation's provenance. */
export interface MemoryStoreOptions {
  clock?: () => Date;
  /** Recorded in the audit log (`run_id`) and usage log (`by`). */
  runId?: string;
  by?: string;
  /**
   * Write `shown`/`used` events for reads and query hits (default true). A consolidation run
   * reads to maintain memory, not to use it, so its reads must not make records look used.
   */
  recordUsage?: boolean;
  /** A consolidation's staged items: the tools then write `sources` / `last_sources` from them. */
  provenance?: Provenance;
  /**
   * Buffer changes (a consolidation run): the index and the tools see them at once, the disk only
   * when the run journals and writes `pendingWrites`, so a failed run leaves no partial records.
   */
  deferred?: boolean;
}

/** A buffered change, with what the index held before it (to roll it back). */
interface PendingChange extends RecordWrite {
  readonly key: string;
  readonly undo: { text: string | undefined; record: ParsedRecord | undefined };
}

/** What a successful change did. */
export interface ChangeResult {
  readonly path: string;
  readonly warnings: LintReport["warnings"];
  readonly audit: AuditRecord;
}

/**
 * The memory records of one workspace, addressed by kind and slug, with every change linted
 * first (nothing is written on an error), written atomically inside `.podkit` and audited. It
 * loads the tree once and keeps its index current with its own writes.
 */
export class MemoryStore {
  readonly paths: MemoryPaths;
  private readonly clock: () => Date;
  private readonly records = new Map<string, ParsedRecord>();
  /** Raw text of every well-placed record file, parsed or not (edit works on broken ones too). */
  private readonly texts = new Map<string, string>();
  /** Record files not read or not editable (a link out of `.podkit`, too large, not UTF-8), with why. */
  private readonly refused = new Map<string, string>();
  private pending: PendingChange[] = [];
  /** Per-record lint results of the files as they were when the store was opened. */
  private opened: RecordLint[] = [];
  private used: Promise<UsedCounts> | undefined;
  /** The tidy step of a consolidation: protected records may then not be compressed heavily. */
  tidying = false;

  private constructor(
    paths: MemoryPaths,
    private readonly options: MemoryStoreOptions,
  ) {
    this.paths = paths;
    this.clock = options.clock ?? (() => new Date());
  }

  /**
   * Loads the memory of `workspace` (an absent tree is an empty memory). A file that cannot be a
   * record — refused, not UTF-8, unparseable — is left out with its lint error; the rest loads.
   */
  static async open(workspace: string, options: MemoryStoreOptions = {}): Promise<MemoryStore> {
    const store = new MemoryStore(memoryPaths(workspace), options);
    const checkpoint = loopYielder();
    for (const file of await loadMemoryFiles(store.paths)) {
      // Parsing and checking every record takes a while on a large tree; let a streaming turn run.
      await checkpoint();
      const result = { file, ...lintRecord(file) };
      store.opened.push(result);
      if (file.kind === undefined) continue;
      const key = recordKey(file.kind, file.slug);
      if (file.problem !== undefined || file.invalidUtf8Line !== undefined) {
        store.refused.set(
          key,
          file.problem ??
            `${file.path} is not UTF-8 text from line ${file.invalidUtf8Line}; save it as UTF-8`,
        );
        continue;
      }
      store.texts.set(key, file.text);
      if (result.record !== undefined) store.records.set(key, result.record);
    }
    return store;
  }

  /**
   * The linter's report on the trees as they were when the store was opened (parsed once, not
   * again), returning to the event loop between records.
   */
  lintAtOpen(): Promise<LintReport> {
    return lintTreeYielding(this.opened, loopYielder());
  }

  /** Parsed records, optionally of one kind, in slug order. */
  list(kind?: RecordKind): ParsedRecord[] {
    return [...this.records.values()]
      .filter((r) => kind === undefined || r.kind === kind)
      .sort((a, b) => (a.kind === b.kind ? (a.slug < b.slug ? -1 : 1) : a.kind < b.kind ? -1 : 1));
  }

  get(kind: RecordKind, slug: string): ParsedRecord | undefined {
    return this.records.get(recordKey(kind, kind === "summary" ? SUMMARY_SLUG : slug));
  }

  /** The record's file text; `MemoryRecordNotFoundError` when it does not exist. */
  read(kind: RecordKind, slug: string): string {
    const key = recordKey(kind, kind === "summary" ? SUMMARY_SLUG : slug);
    const text = this.texts.get(key);
    const refused = this.refused.get(key);
    if (text === undefined && refused !== undefined) throw new MemoryFileRefusedError(refused);
    if (text === undefined) {
      throw new MemoryRecordNotFoundError(
        kind,
        slug,
        "create it with memory_write, or find the right slug with memory_query",
      );
    }
    return text;
  }

  /**
   * Records that the model asked for a record (`used`) or was shown one (`shown`). Returns a
   * warning instead of failing when the usage log cannot be written (linked outside `.podkit`).
   */
  async noteUsage(event: "shown" | "used", kind: RecordKind, slug: string): Promise<string | undefined> {
    if (this.options.recordUsage === false) return undefined;
    try {
      await appendUsage(this.paths, {
        ts: formatTimestamp(this.clock()),
        event,
        kind,
        slug,
        ...(this.options.by === undefined ? {} : { by: this.options.by }),
      });
      return undefined;
    } catch (error) {
      if (!MemoryError.isInstance(error)) throw error;
      return `usage not recorded: ${error.message}`;
    }
  }

  /**
   * Creates (`create`: refused over an existing slug) or overwrites (`write`) a record. Code
   * stamps `updated_at` (and `created_at` when missing), writes the provenance of a consolidation
   * (`origin`), and re-writes the text in canonical form (field order, `model_invocation` spelling).
   */
  write(
    kind: RecordKind,
    slug: string,
    text: string,
    reason: string,
    op: "create" | "write" = "write",
    origin: ChangeOrigin = {},
  ): Promise<ChangeResult> {
    return this.change(op, kind, slug, text, reason, op, origin);
  }

  /** Replaces `oldText` (exactly once, or everywhere with `replaceAll`) and lints the result. */
  edit(
    kind: RecordKind,
    slug: string,
    oldText: string,
    newText: string,
    reason: string,
    replaceAll = false,
    origin: ChangeOrigin = {},
  ): Promise<ChangeResult> {
    const current = this.read(kind, slug);
    if (oldText === "") throw new MemoryEditError("old_text is empty; quote the exact text to replace");
    const count = current.split(oldText).length - 1;
    if (count === 0) {
      throw new MemoryEditError(
        `old_text was not found in the ${kind} "${slug}"; read it with memory_read and quote the text exactly (without line numbers)`,
      );
    }
    if (count > 1 && !replaceAll) {
      throw new MemoryEditError(
        `old_text occurs ${count} times in the ${kind} "${slug}"; quote more surrounding text so it is unique, or set replace_all: true`,
      );
    }
    const next = replaceAll ? current.split(oldText).join(newText) : current.replace(oldText, () => newText);
    return this.change("write", kind, slug, next, reason, "edit", origin);
  }

  /**
   * Deletes a record; refused when a decision would be left with a dangling `replaced_by`, and
   * when the record is protected by its usage (see `protectionProblem`).
   */
  async delete(kind: RecordKind, slug: string, reason: string): Promise<ChangeResult> {
    this.read(kind, slug);
    const problem = protectionProblem(await this.usedCounts(), { op: "delete", kind, slug });
    return this.apply({ op: "delete", kind, slug }, reason, "delete", problem === undefined ? [] : [problem]);
  }

  /** How often each record was used, read once per store from the usage log. */
  private usedCounts(): Promise<UsedCounts> {
    this.used ??= usageReport(this.paths).then(
      (counts) => new Map(counts.map((c) => [`${c.kind}/${c.slug}`, c.used])),
    );
    return this.used;
  }

  /** Stamps, attaches provenance, and applies a create/write. */
  private async change(
    op: "create" | "write",
    kind: RecordKind,
    slug: string,
    text: string,
    reason: string,
    auditOp: AuditRecord["op"],
    origin: ChangeOrigin,
  ): Promise<ChangeResult> {
    const extra: LintDiagnostic[] = [];
    const stamped = this.stamp(kind, slug, text, origin, extra);
    const before = this.get(kind, slug);
    const used = await this.usedCounts();
    return this.apply({ op, kind, slug, text: stamped }, reason, auditOp, extra, (record) =>
      protectionProblem(used, { op: "write", kind, slug, before, after: record, tidy: this.tidying }),
    );
  }

  private stamp(
    kind: RecordKind,
    slug: string,
    text: string,
    origin: ChangeOrigin,
    diagnostics: LintDiagnostic[],
  ): string {
    // Text that cannot be a record goes to the linter as it is, so its lines are the writer's.
    if (text.length > MEMORY_FILE_MAX_BYTES || hasLoneSurrogate(text)) return text;
    const split = splitRecord(text);
    if (!split.ok) return text;
    const now = formatTimestamp(this.clock());
    const before = this.get(kind, slug);
    const frontmatter = { ...split.frontmatter };
    const valid = (value: unknown) =>
      value === undefined || (typeof value === "string" && isRfc3339Utc(value));
    if (kind !== "summary" && frontmatter.created_at === undefined) {
      frontmatter.created_at = before?.frontmatter.created_at ?? now;
    }
    if (valid(frontmatter.updated_at)) frontmatter.updated_at = now;
    if (this.options.provenance !== undefined) {
      diagnostics.push(
        ...attachProvenance(this.options.provenance, { kind, slug, before }, frontmatter, origin, (k, s) =>
          this.get(k, s),
        ),
      );
    }
    return joinRecord(kind, frontmatter, split.body);
  }

  private async apply(
    change: MemoryChange,
    reason: string,
    op: AuditRecord["op"],
    extra: readonly LintDiagnostic[] = [],
    recordCheck?: (record: ParsedRecord) => LintDiagnostic | undefined,
  ): Promise<ChangeResult> {
    const slug = change.kind === "summary" ? SUMMARY_SLUG : change.slug;
    const key = recordKey(change.kind, slug);
    const beforeText = this.texts.get(key);
    const linted = lintChange(this.records, { ...change, slug });
    const checked = linted.record === undefined ? undefined : recordCheck?.(linted.record);
    const report = toReport([
      ...extra,
      ...linted.report.errors,
      ...linted.report.warnings,
      ...(checked === undefined ? [] : [checked]),
    ]);
    const record = report.errors.length === 0 ? linted.record : undefined;
    const audit: AuditRecord = {
      ts: formatTimestamp(this.clock()),
      op: beforeText === undefined && op !== "delete" ? "create" : op,
      kind: change.kind,
      slug,
      status: report.errors.length > 0 ? "rejected" : "applied",
      before_hash: contentHash(beforeText),
      after_hash: contentHash(beforeText),
      reason,
      ...(this.options.runId === undefined ? {} : { run_id: this.options.runId }),
    };
    if (report.errors.length > 0) {
      await appendAudit(this.paths, audit);
      throw new MemoryLintError(report.errors);
    }
    const undo = { text: beforeText, record: this.records.get(key) };
    // Canonical form: the validated frontmatter (alias rewritten, defaults filled) and the body.
    const text = record === undefined ? null : joinRecord(change.kind, record.frontmatter, record.body);
    audit.after_hash = contentHash(text ?? undefined);
    const pending: PendingChange = { kind: change.kind, slug, text, audit, key, undo };
    if (this.options.deferred === true) this.pending.push(pending);
    else {
      // On disk first: a write refused there (a directory linked out of .podkit) leaves the index as it was.
      await persistRecordWrite(this.paths, pending);
      await bumpMemoryStamp(this.paths);
    }
    if (text === null) {
      this.texts.delete(key);
      this.records.delete(key);
    } else if (record !== undefined) {
      this.texts.set(key, text);
      this.records.set(key, { ...record, text });
    }
    return { path: recordLabel(change.kind, slug), warnings: report.warnings, audit };
  }

  /** The buffered changes as they would reach the disk (a consolidation journals them first). */
  get pendingWrites(): readonly RecordWrite[] {
    return this.pending.map(({ kind, slug, text, audit }) => ({ kind, slug, text, audit }));
  }

  /** A mark to roll back to (`rollbackTo`): the number of buffered changes now. */
  checkpoint(): number {
    return this.pending.length;
  }

  /** Drops the buffered changes made after `mark`, restoring what the index held before them. */
  rollbackTo(mark: number): void {
    while (this.pending.length > mark) {
      const change = this.pending.pop();
      if (change === undefined) break;
      if (change.undo.text === undefined) this.texts.delete(change.key);
      else this.texts.set(change.key, change.undo.text);
      if (change.undo.record === undefined) this.records.delete(change.key);
      else this.records.set(change.key, change.undo.record);
    }
  }
}
