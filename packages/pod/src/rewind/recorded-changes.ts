import { isBlobDigest } from "@podkit/session-store";
import { FILES_CHANGED_DOMAIN, parseFilesChanged } from "@podkit/tools";
import { z } from "zod";
import { InvalidFileChangeError } from "./errors.js";
import { type LineageSegment, turnsOf } from "./session-lineage.js";
import { unsafePathReason } from "./workspace-files.js";

/**
 * The `extension` domain of a rewind's own record: in the segment it leaves, the claim that
 * commits it (`segment_id`: the new head, or null), and in a new head forked without restoring
 * the files, what they are. `changes` are the files it set, in the shape of a `files.changed`
 * entry; a rewind reads both domains, so each line of work records what its files are.
 */
export const REWIND_DOMAIN = "session.rewind";

const Digest = z.string().refine(isBlobDigest, { message: "not a sha256 blob digest" }).nullable();

/** The payload of a `session.rewind` entry. */
export const RewindRecordSchema = z.strictObject({
  rewind_id: z.string().min(1),
  to_turn: z.int().min(0),
  segment_id: z.string().min(1).nullable().optional(),
  changes: z.array(z.strictObject({ path: z.string(), before: Digest, after: Digest })),
});

export type RewindRecord = z.infer<typeof RewindRecordSchema>;

/** One recorded change of one file, in the turn it was made in. */
export interface RecordedChange {
  path: string;
  before: string | null;
  after: string | null;
  turn: number;
}

/** What a rewind to turn N needs to know of one file the session changed after turn N. */
export interface FileHistory {
  path: string;
  /** Its content at the end of turn N (`null`: it did not exist). */
  atTurn: string | null;
  /** Its last recorded content: what the session last left there. */
  last: string | null;
}

/**
 * Every file change recorded along the session's line of work, oldest first, each with its turn:
 * the `files.changed` entries of the tools (read by their owner's parser, which leaves a malformed
 * one out: the check of each file's current content catches what it would have said) and the
 * rewinds' own records. A drift fork starts with copies of its source's entries (the latest
 * extension entries, then the open turn): a copy before the fork's first `invoke` of an entry the
 * line already holds is skipped, so no change counts in the wrong turn. A path that is not plain
 * and workspace-relative, or lies in the session store, is `InvalidFileChangeError`: the log is
 * untrusted and such a path is never opened.
 */
export function recordedChanges<TItem>(line: readonly LineageSegment<TItem>[]): RecordedChange[] {
  const changes: RecordedChange[] = [];
  const seen = new Set<string>();
  for (const segment of line) {
    const turns = turnsOf(segment.entries, segment.startTurn);
    let invoked = false;
    for (const [index, entry] of segment.entries.entries()) {
      if (entry.kind === "invoke") invoked = true;
      if (entry.kind !== "extension") continue;
      if (entry.domain !== FILES_CHANGED_DOMAIN && entry.domain !== REWIND_DOMAIN) continue;
      const text = JSON.stringify(entry);
      if (segment.link?.kind === "forked" && !invoked && seen.has(text)) continue;
      seen.add(text);
      const where = { segmentId: segment.ref.segmentId, index };
      for (const change of changesOf(entry.domain, entry.payload, where)) {
        const unsafe = unsafePathReason(change.path);
        if (unsafe !== undefined) throw new InvalidFileChangeError({ ...where, reason: unsafe });
        changes.push({ ...change, turn: turns[index] as number });
      }
    }
  }
  return changes;
}

function changesOf(
  domain: string,
  payload: unknown,
  where: { segmentId: string; index: number },
): readonly { path: string; before: string | null; after: string | null }[] {
  if (domain === FILES_CHANGED_DOMAIN) return parseFilesChanged(payload)?.changes ?? [];
  const parsed = RewindRecordSchema.safeParse(payload);
  if (parsed.success) return parsed.data.changes;
  const issue = parsed.error.issues[0];
  throw new InvalidFileChangeError({
    ...where,
    reason: `${REWIND_DOMAIN} payload.${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}`,
  });
}

/**
 * For each file changed after turn `turn`: its content at the end of that turn (the `after` of
 * its last change up to then, else the `before` of its first change after it) and its last
 * recorded content (the `after` of its last change), in the order the files were first changed.
 */
export function fileHistories(changes: readonly RecordedChange[], turn: number): FileHistory[] {
  const byPath = new Map<
    string,
    { upTo?: RecordedChange; firstAfter?: RecordedChange; last: RecordedChange }
  >();
  for (const change of changes) {
    const known = byPath.get(change.path) ?? { last: change };
    known.last = change;
    if (change.turn <= turn) known.upTo = change;
    else known.firstAfter ??= change;
    byPath.set(change.path, known);
  }
  const histories: FileHistory[] = [];
  for (const [path, known] of byPath) {
    if (known.firstAfter === undefined) continue;
    const atTurn = known.upTo !== undefined ? known.upTo.after : known.firstAfter.before;
    histories.push({ path, atTurn, last: known.last.after });
  }
  return histories;
}
