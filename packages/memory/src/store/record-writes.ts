import { randomBytes } from "node:crypto";
import { basename, dirname } from "node:path";
import { kindDir, type MemoryPaths, type RecordKind, recordFile } from "../records/layout.js";
import type { AuditRecord } from "./audit-log.js";

import { withContainedDir, withExistingDir } from "./contained-dir.js";

/** One change of a record as it reaches the disk: the new text (null: deleted) and its audit line. */
export interface RecordWrite {
  readonly kind: RecordKind;
  readonly slug: string;
  readonly text: string | null;
  readonly audit: AuditRecord;
}

/**
 * Writes one record change, then appends its audit line. Both go through directories verified
 * inside `.podkit` (`ContainedDir`); the audit directory is opened first, so a log directory
 * linked outside refuses the change before the record is touched.
 */
export async function persistRecordWrite(paths: MemoryPaths, change: RecordWrite): Promise<void> {
  await withAuditLog(paths, async (audit) => {
    await writeRecordFile(paths, change.kind, change.slug, change.text);
    await audit(change.audit);
  });
}

/**
 * Runs `fn` with an appender of audit lines; the audit directory is opened (and verified inside
 * `.podkit`) first, so a log directory linked outside refuses before any record is touched.
 */
export async function withAuditLog<T>(
  paths: MemoryPaths,
  fn: (append: (record: AuditRecord) => Promise<void>) => Promise<T>,
): Promise<T> {
  return withContainedDir(paths.workspace, dirname(paths.auditLog), (logs) =>
    fn((record) => logs.append(basename(paths.auditLog), `${JSON.stringify(record)}\n`)),
  );
}

/** Writes (atomically) or deletes (`text` null) one record file, inside `.podkit` only. */
export async function writeRecordFile(
  paths: MemoryPaths,
  kind: RecordKind,
  slug: string,
  text: string | null,
): Promise<void> {
  const name = basename(recordFile(paths, kind, slug));
  const dir = kindDir(paths, kind);
  if (text === null) await withExistingDir(paths.workspace, dir, (d) => d.remove(name));
  else await withContainedDir(paths.workspace, dir, (d) => d.writeAtomic(name, text));
}

/** The file every writer of records rewrites after a change (see `memoryTreeStamp`). */
export const STAMP_NAME = ".stamp";

/** Tells cached stores the records changed: a new random stamp, written atomically. */
export async function bumpMemoryStamp(paths: MemoryPaths): Promise<void> {
  await withContainedDir(paths.workspace, paths.memoryDir, (dir) =>
    dir.writeAtomic(STAMP_NAME, randomBytes(8).toString("hex")),
  );
}
