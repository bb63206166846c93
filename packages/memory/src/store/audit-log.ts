import { createHash } from "node:crypto";
import type { MemoryPaths, RecordKind } from "../records/layout.js";
import { appendJsonLine, readJsonLines } from "./jsonl-log.js";

/** One line of `memory/_logs/audit.jsonl`: what changed (hashes), and why (the writer's reason). */
export interface AuditRecord {
  ts: string;
  op: "create" | "write" | "edit" | "delete";
  kind: RecordKind;
  slug: string;
  /** `applied`, or `rejected` when the linter refused the change (nothing was written). */
  status: "applied" | "rejected";
  /** sha256 of the file before and after, null when it did not / does not exist. */
  before_hash: string | null;
  after_hash: string | null;
  reason: string;
  /** The consolidation run (or other job) that made the change. */
  run_id?: string;
}

/** sha256 hex of a record's text (null for an absent file). */
export function contentHash(text: string | undefined): string | null {
  return text === undefined ? null : createHash("sha256").update(text, "utf8").digest("hex");
}

export function appendAudit(paths: MemoryPaths, record: AuditRecord): Promise<void> {
  return appendJsonLine(paths.workspace, paths.auditLog, record);
}

/** Every audit record, oldest first. */
export async function readAuditLog(paths: MemoryPaths): Promise<AuditRecord[]> {
  return (await readJsonLines(paths.workspace, paths.auditLog)) as AuditRecord[];
}
