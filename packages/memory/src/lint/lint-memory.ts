import { type RecordKind, recordLabel, SUMMARY_SLUG } from "../records/layout.js";
import { similarSlugPairs, similarSlugs } from "../records/slug.js";
import { type LintDiagnostic, type LintReport, toReport } from "./diagnostics.js";
import { bodyReferences, lintRecord, type MemoryFile, type ParsedRecord } from "./lint-record.js";

const key = (kind: RecordKind, slug: string) => `${kind}/${slug}`;

/** Every `replaced_by` cycle among decisions, each once, as the slugs in it. */
function replacedByCycles(next: ReadonlyMap<string, string>): string[][] {
  const done = new Set<string>();
  const cycles: string[][] = [];
  for (const start of next.keys()) {
    const path: string[] = [];
    const onPath = new Map<string, number>();
    let at: string | undefined = start;
    while (at !== undefined && !done.has(at)) {
      if (onPath.has(at)) {
        cycles.push(path.slice(onPath.get(at)));
        break;
      }
      onPath.set(at, path.length);
      path.push(at);
      at = next.get(at);
    }
    for (const slug of path) done.add(slug);
  }
  return cycles;
}

/** One file's own lint result: its diagnostics and, when nothing blocks it, the parsed record. */
export interface RecordLint {
  readonly file: MemoryFile;
  readonly diagnostics: readonly LintDiagnostic[];
  readonly record?: ParsedRecord;
}

/**
 * The linter over a whole memory tree (pure: it is given the files' text, it reads nothing).
 * Per-record checks, then the checks between records: `replaced_by` names an existing decision and
 * forms no cycle, `#slug` references name existing records, and similar slugs of one kind (a
 * warning).
 */
export function lintMemory(files: readonly MemoryFile[]): LintReport {
  return lintTree(files.map((file) => ({ file, ...lintRecord(file) })));
}

/** The checks between records, over per-record results already computed (`lintRecord`). */
export function lintTree(results: readonly RecordLint[]): LintReport {
  const steps = lintTreeSteps(results);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/** `lintTree` that awaits `checkpoint` between records (see `loopYielder`), for whole-tree passes in a pod. */
export async function lintTreeYielding(
  results: readonly RecordLint[],
  checkpoint: () => Promise<void>,
): Promise<LintReport> {
  const steps = lintTreeSteps(results);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    await checkpoint();
  }
}

/** The tree checks as steps: it yields after each record's cross checks, so a caller can pause between them. */
function* lintTreeSteps(results: readonly RecordLint[]): Generator<void, LintReport> {
  const diagnostics: LintDiagnostic[] = [];
  const records: ParsedRecord[] = [];
  for (const result of results) {
    diagnostics.push(...result.diagnostics);
    if (result.record !== undefined) records.push(result.record);
  }
  const files = results.map((r) => r.file);
  // Cross-record checks know every well-placed file, parsed or not, so one bad record does not
  // make every reference to it dangle.
  const existing = new Set(files.filter((f) => f.kind !== undefined).map((f) => f.slug));
  const decisions = new Set(files.filter((f) => f.kind === "decision").map((f) => f.slug));
  const next = new Map<string, string>();
  for (const record of records) {
    diagnostics.push(...crossChecks(record, existing, decisions));
    yield;
    const replacedBy = record.frontmatter.replaced_by;
    if (record.kind === "decision" && typeof replacedBy === "string") next.set(record.slug, replacedBy);
  }
  for (const cycle of replacedByCycles(next)) {
    if (cycle.length < 2) continue;
    const first = cycle[0] ?? "";
    diagnostics.push({
      severity: "error",
      code: "replaced_by",
      record: recordLabel("decision", first),
      kind: "decision",
      slug: first,
      field: "replaced_by",
      message: `replaced_by forms a cycle (${[...cycle, first].join(" -> ")}); the newest decision of a chain must not be replaced`,
    });
  }
  for (const kind of ["decision", "request", "knowledge"] as const) {
    const slugs = files.filter((f) => f.kind === kind).map((f) => f.slug);
    for (const [a, b] of similarSlugPairs(slugs)) diagnostics.push(similarWarning(kind, a, b));
  }
  return toReport(diagnostics);
}

function similarWarning(kind: RecordKind, slug: string, other: string): LintDiagnostic {
  return {
    severity: "warning",
    code: "similar_slug",
    record: recordLabel(kind, slug),
    kind,
    slug,
    message: `slug "${slug}" is similar to the existing ${kind} "${other}"; if they are about the same thing, merge them`,
  };
}

/** `replaced_by` existence and `#slug` references of one record against the slugs that exist. */
function crossChecks(
  record: ParsedRecord,
  existing: ReadonlySet<string>,
  decisions: ReadonlySet<string>,
): LintDiagnostic[] {
  const out: LintDiagnostic[] = [];
  const base = { severity: "error" as const, record: record.path, kind: record.kind, slug: record.slug };
  const replacedBy = record.frontmatter.replaced_by;
  if (
    record.kind === "decision" &&
    typeof replacedBy === "string" &&
    replacedBy !== record.slug &&
    !decisions.has(replacedBy)
  ) {
    out.push({
      ...base,
      code: "replaced_by",
      field: "replaced_by",
      message: `replaced_by names "${replacedBy}", but no such decision exists; write that decision first or fix the slug`,
    });
  }
  for (const ref of bodyReferences(record.body)) {
    if (!existing.has(ref)) {
      out.push({
        ...base,
        code: "reference",
        field: "body",
        message: `#${ref} names no existing record; reference only records that exist (or drop the "#")`,
      });
    }
  }
  return out;
}

/** A change the memory tools are about to make. */
export type MemoryChange =
  | { op: "create" | "write"; kind: RecordKind; slug: string; text: string }
  | { op: "delete"; kind: RecordKind; slug: string };

/**
 * The linter for one proposed change against the current records (pure): the record's own checks,
 * create-over-existing (steer to edit), `replaced_by` existence and cycles with the change
 * applied, `#slug` references, similar slugs (warning), and a delete that would leave a dangling
 * `replaced_by`.
 */
export function lintChange(
  current: ReadonlyMap<string, ParsedRecord>,
  change: MemoryChange,
): { report: LintReport; record?: ParsedRecord } {
  const path = recordLabel(change.kind, change.slug);
  const before = current.get(key(change.kind, change.slug));
  const base = { severity: "error" as const, record: path, kind: change.kind, slug: change.slug };
  if (change.op === "delete") {
    const dependants = [...current.values()].filter(
      (r) => r.kind === "decision" && r.frontmatter.replaced_by === change.slug && r.slug !== change.slug,
    );
    const diagnostics: LintDiagnostic[] =
      change.kind === "decision" && dependants.length > 0
        ? [
            {
              ...base,
              code: "dangling_replaced_by",
              message: `cannot delete: ${dependants.map((d) => `"${d.slug}"`).join(", ")} ${dependants.length > 1 ? "are" : "is"} replaced_by this decision; point ${dependants.length > 1 ? "them" : "it"} elsewhere first`,
            },
          ]
        : [];
    return { report: toReport(diagnostics) };
  }
  const file: MemoryFile = {
    kind: change.kind,
    slug: change.kind === "summary" ? SUMMARY_SLUG : change.slug,
    text: change.text,
    path,
  };
  const own = lintRecord(file);
  const diagnostics = [...own.diagnostics];
  if (change.op === "create" && before !== undefined) {
    diagnostics.push({
      ...base,
      code: "exists",
      message: `${path} already exists; read it with memory_read and change it with memory_edit (or overwrite it deliberately with memory_write and overwrite: true)`,
    });
  }
  const record = own.record;
  if (record !== undefined) {
    const existing = new Set([...current.values()].map((r) => r.slug).concat(record.slug));
    const decisions = new Set([...current.values()].filter((r) => r.kind === "decision").map((r) => r.slug));
    if (record.kind === "decision") decisions.add(record.slug);
    diagnostics.push(...crossChecks(record, existing, decisions));
    if (record.kind === "decision") diagnostics.push(...cycleThrough(current, record));
    if (before === undefined && record.kind !== "summary") {
      const similar = [...current.values()].find(
        (r) => r.kind === record.kind && similarSlugs(r.slug, record.slug),
      );
      if (similar !== undefined) diagnostics.push(similarWarning(record.kind, record.slug, similar.slug));
    }
  }
  const report = toReport(diagnostics);
  return report.errors.length === 0 && record !== undefined ? { report, record } : { report };
}

function cycleThrough(current: ReadonlyMap<string, ParsedRecord>, record: ParsedRecord): LintDiagnostic[] {
  const seen = [record.slug];
  let at = record.frontmatter.replaced_by;
  while (typeof at === "string" && at !== record.slug) {
    if (seen.includes(at)) return [];
    seen.push(at);
    at = current.get(key("decision", at))?.frontmatter.replaced_by;
  }
  if (at !== record.slug || seen.length < 2) return [];
  return [
    {
      severity: "error",
      code: "replaced_by",
      record: record.path,
      kind: "decision",
      slug: record.slug,
      field: "replaced_by",
      message: `replaced_by forms a cycle (${[...seen, record.slug].join(" -> ")}); the newest decision of a chain must not be replaced`,
    },
  ];
}

/** Map key of a record in a `lintChange` index. */
export const recordKey = key;
