import type { LintDiagnostic } from "../lint/diagnostics.js";
import type { ParsedRecord } from "../lint/lint-record.js";
import { type RecordKind, recordLabel } from "../records/layout.js";
import type { Source } from "../records/record-schema.js";

/**
 * The staged items of one consolidation run, by the ids the worker's input shows them with
 * (`s1-d1`: decision 1 of staging entry 1). Seed 004: sources are attached by code and never
 * assembled by a model — the worker names items, the tools write `sources` / `last_sources`.
 */
export interface Provenance {
  readonly items: ReadonlyMap<string, { readonly source: Source }>;
  /** Ids of the items listed in the knowledge candidate report: the only origin of new knowledge. */
  readonly candidates: ReadonlySet<string>;
}

/** What a change says about where its content came from. */
export interface ChangeOrigin {
  /** Ids of the staged items the change integrates. */
  readonly staged?: readonly string[];
  /** Slugs of records of the same kind merged into this one: their sources are carried over. */
  readonly mergedFrom?: readonly string[];
}

const sourceKey = (source: Source) => `${source.segment_id}:${source.range[0]}-${source.range[1]}`;

function union(...lists: readonly (readonly Source[])[]): Source[] {
  const seen = new Map<string, Source>();
  for (const list of lists)
    for (const source of list) if (!seen.has(sourceKey(source))) seen.set(sourceKey(source), source);
  return [...seen.values()];
}

const sourcesOf = (record: ParsedRecord | undefined, field: string): Source[] =>
  (record?.frontmatter[field] as Source[] | undefined) ?? [];

/** The field a kind keeps its provenance in. */
export const sourceField = (kind: RecordKind) => (kind === "knowledge" ? "last_sources" : "sources");

/**
 * Writes a change's provenance into its frontmatter (in place) from the run's staging data: a
 * decision or request keeps the sources it had and gains those of the staged items and merged
 * records; knowledge gets `last_sources` from its staged items (kept when none are named), and
 * new knowledge must come from items of the knowledge candidate report. Returns the problems
 * (errors block the change) — a value the model wrote there is replaced, with a warning.
 */
export function attachProvenance(
  provenance: Provenance,
  change: { kind: RecordKind; slug: string; before: ParsedRecord | undefined },
  frontmatter: Record<string, unknown>,
  origin: ChangeOrigin,
  records: (kind: RecordKind, slug: string) => ParsedRecord | undefined,
): LintDiagnostic[] {
  const { kind, slug, before } = change;
  if (kind === "summary") return [];
  const field = sourceField(kind);
  const base = { record: recordLabel(kind, slug), kind, slug, field };
  const error = (message: string): LintDiagnostic => ({
    severity: "error",
    code: "source_not_given",
    ...base,
    message,
  });
  const staged = origin.staged ?? [];
  const unknown = staged.filter((id) => !provenance.items.has(id));
  if (unknown.length > 0) {
    return [
      error(
        `${unknown.map((id) => `"${id}"`).join(", ")} ${unknown.length > 1 ? "are not staged items" : "is not a staged item"} of this run; name items by the ids your input shows them with (such as s1-d1)`,
      ),
    ];
  }
  const stagedSources = staged.flatMap((id) => {
    const item = provenance.items.get(id);
    return item === undefined ? [] : [item.source];
  });
  const merged = (origin.mergedFrom ?? []).map((other) => records(kind, other));
  const missing = (origin.mergedFrom ?? []).filter((_, i) => merged[i] === undefined);
  if (missing.length > 0) {
    return [
      error(`merged_from names ${missing.map((m) => `"${m}"`).join(", ")}, but no such ${kind} exists`),
    ];
  }
  const mergedSources = merged.flatMap((record) => sourcesOf(record, field));
  let next: Source[];
  if (kind !== "knowledge") {
    next = union(sourcesOf(before, field), stagedSources, mergedSources);
  } else if (before === undefined) {
    if (provenance.candidates.size === 0) {
      return [
        error(
          "no topic of this run's staging recurs across two sessions (the knowledge candidate report is empty), so no knowledge may be created in this run; integrate it into an existing knowledge entry, a decision or the summary instead",
        ),
      ];
    }
    const outside = staged.filter((id) => !provenance.candidates.has(id));
    if (staged.length === 0 || outside.length > 0) {
      return [
        error(
          staged.length === 0
            ? "new knowledge must name the items of the knowledge candidate report it comes from in `staged`"
            : `${outside.map((id) => `"${id}"`).join(", ")} ${outside.length > 1 ? "are" : "is"} not in the knowledge candidate report; new knowledge may only come from its items`,
        ),
      ];
    }
    next = union(stagedSources, mergedSources);
  } else {
    next =
      staged.length > 0
        ? union(stagedSources, mergedSources)
        : union(sourcesOf(before, field), mergedSources);
  }
  const written = frontmatter[field];
  frontmatter[field] = next;
  if (written === undefined || JSON.stringify(written) === JSON.stringify(next)) return [];
  return [
    {
      severity: "warning",
      code: "sources",
      ...base,
      message: `${field} are written by the tools from the staged items you name (\`staged\`); the value in your content was replaced`,
    },
  ];
}
