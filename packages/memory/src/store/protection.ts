import type { LintDiagnostic } from "../lint/diagnostics.js";
import type { ParsedRecord } from "../lint/lint-record.js";
import { type RecordKind, recordLabel } from "../records/layout.js";
import { PROTECTION_THRESHOLD } from "./usage-log.js";

/** A protected record may not shrink below this share of its body in the tidy step. */
export const PROTECTED_MIN_BODY_SHARE = 0.5;

/** How often a record was read explicitly (`used`), by `kind/slug`. */
export type UsedCounts = ReadonlyMap<string, number>;

const protectedMessage = (kind: RecordKind, slug: string, used: number) =>
  `the ${kind} "${slug}" was read explicitly (memory_read) ${used} time${used === 1 ? "" : "s"}, at or above the protection threshold of ${PROTECTION_THRESHOLD}`;

/**
 * Seed 004's protection, enforced by code: a record used at least `PROTECTION_THRESHOLD` times
 * may not be deleted, and in the tidy step not compressed heavily (its body cut below half).
 * Returns the error that refuses the change, naming the usage count, or nothing.
 */
export function protectionProblem(
  used: UsedCounts,
  change:
    | { op: "delete"; kind: RecordKind; slug: string }
    | {
        op: "write";
        kind: RecordKind;
        slug: string;
        before: ParsedRecord | undefined;
        after: ParsedRecord;
        tidy: boolean;
      },
): LintDiagnostic | undefined {
  const count = used.get(`${change.kind}/${change.slug}`) ?? 0;
  if (count < PROTECTION_THRESHOLD) return undefined;
  const base = {
    severity: "error" as const,
    code: "protected" as const,
    record: recordLabel(change.kind, change.slug),
    kind: change.kind,
    slug: change.slug,
  };
  if (change.op === "delete") {
    return {
      ...base,
      message: `cannot delete: ${protectedMessage(change.kind, change.slug, count)}; merge it into another record, trim it, or (a decision) mark it replaced instead`,
    };
  }
  if (!change.tidy || change.before === undefined) return undefined;
  const was = change.before.body.length;
  const now = change.after.body.length;
  if (now >= was * PROTECTED_MIN_BODY_SHARE) return undefined;
  return {
    ...base,
    field: "body",
    message: `cannot compress it this much (body ${was} -> ${now} characters): ${protectedMessage(change.kind, change.slug, count)}; keep at least half of it`,
  };
}
