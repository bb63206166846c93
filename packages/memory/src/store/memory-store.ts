import { unlink } from "node:fs/promises";
import {
  MemoryEditError,
  MemoryFileRefusedError,
  MemoryLintError,
  MemoryRecordNotFoundError,
} from "../errors.js";
import type { LintReport } from "../lint/diagnostics.js";
import {
  lintChange,
  lintTreeYielding,
  type MemoryChange,
  type RecordLint,
  recordKey,
  type SourceRules,
} from "../lint/lint-memory.js";
import { lintRecord, type ParsedRecord } from "../lint/lint-record.js";
import { joinRecord, splitRecord } from "../records/frontmatter.js";
import {
  type MemoryPaths,
  memoryPaths,
  type RecordKind,
  recordFile,
  SUMMARY_SLUG,
} from "../records/layout.js";
import { formatTimestamp, isRfc3339Utc } from "../records/record-schema.js";
import { writeFileAtomic } from "./atomic-write.js";
import { type AuditRecord, appendAudit, contentHash } from "./audit-log.js";
import { loadMemoryFiles } from "./load-memory-files.js";
import { loopYielder } from "./loop-yield.js";
import { appendUsage } from "./usage-log.js";

/** Options of a memory store: the clock of timestamps, who is writing, and consolidation's source rules. */
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
  sourceRules?: SourceRules;
  /**
   * Buffer changes until `commit()` (a consolidation run): the index and the tools see them at
   * once, the disk only on commit, so a failed run leaves no partial records behind.
   */
  deferred?: boolean;
}

interface PendingChange {
  file: string;
  text: string | null;
  audit: AuditRecord;
}

/** What a successful change did. */
export interface ChangeResult {
  readonly path: string;
  readonly warnings: LintReport["warnings"];
  readonly audit: AuditRecord;
}

/**
 * The memory records of one workspace, addressed by kind and slug, with every change linted
 * first (nothing is written on an error), written atomically and audited. It loads the tree once
 * and keeps its index current with its own writes.
 */
export class MemoryStore {
  readonly paths: MemoryPaths;
  private readonly clock: () => Date;
  private readonly records = new Map<string, ParsedRecord>();
  /** Raw text of every well-placed record file, parsed or not (edit works on broken ones too). */
  private readonly texts = new Map<string, string>();
  /** Record files not read (a link out of `.podkit`, too large), with why. */
  private readonly refused = new Map<string, string>();
  private pending: PendingChange[] = [];
  /** Per-record lint results of the files as they were when the store was opened. */
  private opened: RecordLint[] = [];

  private constructor(
    paths: MemoryPaths,
    private readonly options: MemoryStoreOptions,
  ) {
    this.paths = paths;
    this.clock = options.clock ?? (() => new Date());
  }

  /** Loads the memory of `workspace` (an absent tree is an empty memory). */
  static async open(workspace: string, options: MemoryStoreOptions = {}): Promise<MemoryStore> {
    const store = new MemoryStore(memoryPaths(workspace), options);
    const checkpoint = loopYielder();
    for (const file of await loadMemoryFiles(store.paths)) {
      // Parsing and checking every record takes a while on a large tree; let a streaming turn run.
      await checkpoint();
      const result = { file, ...lintRecord(file) };
      store.opened.push(result);
      if (file.kind === undefined) continue;
      if (file.problem !== undefined) {
        store.refused.set(recordKey(file.kind, file.slug), file.problem);
        continue;
      }
      store.texts.set(recordKey(file.kind, file.slug), file.text);
      if (result.record !== undefined) store.records.set(recordKey(file.kind, file.slug), result.record);
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

  /** Records that the model asked for a record (`used`) or was shown one (`shown`). */
  async noteUsage(event: "shown" | "used", kind: RecordKind, slug: string): Promise<void> {
    if (this.options.recordUsage === false) return;
    await appendUsage(this.paths.usageLog, {
      ts: formatTimestamp(this.clock()),
      event,
      kind,
      slug,
      ...(this.options.by === undefined ? {} : { by: this.options.by }),
    });
  }

  /**
   * Creates (`create`: refused over an existing slug) or overwrites (`write`) a record. Code
   * stamps `updated_at` (and `created_at` when missing); the text is re-written in canonical
   * form (field order, `model_invocation` spelling).
   */
  write(
    kind: RecordKind,
    slug: string,
    text: string,
    reason: string,
    op: "create" | "write" = "write",
  ): Promise<ChangeResult> {
    return this.apply({ op, kind, slug, text: this.stamp(kind, slug, text) }, reason, op);
  }

  /** Replaces `oldText` (exactly once, or everywhere with `replaceAll`) and lints the result. */
  edit(
    kind: RecordKind,
    slug: string,
    oldText: string,
    newText: string,
    reason: string,
    replaceAll = false,
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
    return this.apply({ op: "write", kind, slug, text: this.stamp(kind, slug, next) }, reason, "edit");
  }

  /** Deletes a record; refused when a decision would be left with a dangling `replaced_by`. */
  delete(kind: RecordKind, slug: string, reason: string): Promise<ChangeResult> {
    this.read(kind, slug);
    return this.apply({ op: "delete", kind, slug }, reason, "delete");
  }

  private stamp(kind: RecordKind, slug: string, text: string): string {
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
    return joinRecord(kind, frontmatter, split.body);
  }

  private async apply(change: MemoryChange, reason: string, op: AuditRecord["op"]): Promise<ChangeResult> {
    const slug = change.kind === "summary" ? SUMMARY_SLUG : change.slug;
    const key = recordKey(change.kind, slug);
    const file = recordFile(this.paths, change.kind, slug);
    const beforeText = this.texts.get(key);
    const { report, record } = lintChange(this.records, { ...change, slug }, this.options.sourceRules);
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
      await appendAudit(this.paths.auditLog, audit);
      throw new MemoryLintError(report.errors);
    }
    let text: string | null = null;
    if (change.op === "delete") {
      this.texts.delete(key);
      this.records.delete(key);
      audit.after_hash = null;
    } else if (record !== undefined) {
      // Canonical form: the validated frontmatter (alias rewritten, defaults filled) and the body.
      text = joinRecord(change.kind, record.frontmatter, record.body);
      this.texts.set(key, text);
      this.records.set(key, { ...record, text });
      audit.after_hash = contentHash(text);
    }
    const pending = { file, text, audit };
    if (this.options.deferred === true) this.pending.push(pending);
    else await this.persist(pending);
    return { path: record?.path ?? file, warnings: report.warnings, audit };
  }

  private async persist(change: PendingChange): Promise<void> {
    if (change.text === null)
      await unlink(change.file).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "ENOENT") throw e;
      });
    else await writeFileAtomic(change.file, change.text);
    await appendAudit(this.paths.auditLog, change.audit);
  }

  /** Changes buffered by a deferred store (in order), with their audit records. */
  get pendingChanges(): readonly AuditRecord[] {
    return this.pending.map((p) => p.audit);
  }

  /** Writes the buffered changes of a deferred store, each atomically, in order; returns their audit records. */
  async commit(): Promise<AuditRecord[]> {
    const changes = this.pending;
    this.pending = [];
    for (const change of changes) await this.persist(change);
    return changes.map((c) => c.audit);
  }
}
