import type { StagingEntry } from "../extract/extract-schema.js";
import type { ParsedRecord } from "../lint/lint-record.js";
import { PROTECTION_THRESHOLD, type UsageCount } from "../store/usage-log.js";
import type { ConsolidationInputContext, MemoryPrompts } from "../worker/memory-model.js";
import type { KnowledgeCandidate } from "./candidate-report.js";
import type { StagedItem } from "./staged-items.js";
import type { TidyHints } from "./tidy-hints.js";

/** Everything the consolidation worker is given in its one input message. */
export interface ConsolidationInput {
  readonly staging: readonly StagingEntry[];
  readonly items: readonly StagedItem[];
  readonly summary: ParsedRecord | undefined;
  readonly decisions: readonly ParsedRecord[];
  readonly requests: readonly ParsedRecord[];
  readonly usage: readonly UsageCount[];
  readonly hints: TidyHints;
  readonly candidates: readonly KnowledgeCandidate[];
  /** Characters of decisions and requests given in full (default `FULL_TEXT_BUDGET`). */
  readonly fullTextBudget?: number;
}

/**
 * Decisions and requests are given in full up to this many characters (~100k tokens); past it the
 * most recently updated come first and the rest are listed by slug and first line, to be read with
 * `memory_read` — a memory of thousands of records must not overflow the worker's context.
 */
export const FULL_TEXT_BUDGET = 400_000;

/** The records shown in full (newest first, within the budget); the rest are listed. */
function withinBudget(records: readonly ParsedRecord[], budget: number): Set<ParsedRecord> {
  const byRecent = [...records].sort((a, b) =>
    String(b.frontmatter.updated_at ?? "").localeCompare(String(a.frontmatter.updated_at ?? "")),
  );
  const full = new Set<ParsedRecord>();
  let used = 0;
  for (const record of byRecent) {
    if (used + record.text.length > budget) continue;
    full.add(record);
    used += record.text.length;
  }
  return full;
}

function recordsContext(records: readonly ParsedRecord[], full: ReadonlySet<ParsedRecord>) {
  return {
    full: records.filter((r) => full.has(r)).map((r) => ({ slug: r.slug, text: r.text.trimEnd() })),
    listed: records
      .filter((r) => !full.has(r))
      .map((r) => ({ slug: r.slug, first_line: r.body.split("\n", 1)[0]?.slice(0, 120) ?? "" })),
  };
}

/**
 * The data of the input message, in the shape the catalog's `memory_consolidation_input`
 * renders: staged items by id (their sources stay with code), the summary, decisions and
 * requests, the usage report, tidy hints and the knowledge candidate report.
 */
export function consolidationInputContext(input: ConsolidationInput): ConsolidationInputContext {
  const full = withinBudget(
    [...input.decisions, ...input.requests],
    input.fullTextBudget ?? FULL_TEXT_BUDGET,
  );
  const itemView = (item: StagedItem) => ({
    id: item.id,
    kind: item.kind,
    topic: item.topic,
    ...item.fields,
  });
  const h = input.hints;
  return {
    staging: input.staging.map((entry) => ({
      id: `s${input.staging.indexOf(entry) + 1}`,
      session_id: entry.session_id,
      created_at: entry.created_at,
      items: input.items.filter((item) => item.entryId === entry.id).map(itemView),
    })),
    summary: input.summary === undefined ? "" : input.summary.text.trimEnd(),
    decisions: recordsContext(input.decisions, full),
    requests: recordsContext(input.requests, full),
    protection_threshold: PROTECTION_THRESHOLD,
    usage: input.usage.map((u) => ({ ...u, protected: u.used >= PROTECTION_THRESHOLD })),
    hints: {
      replaced_chains: h.replacedChains.map((chain) => [...chain]),
      sources_overflow: h.sourcesOverflow.map((r) => ({ ...r })),
      similar_slugs: h.similarSlugs.map((s) => ({ kind: s.kind, slugs: [...s.slugs] })),
      lint_warnings: h.lintWarnings.map((w) => ({
        record: w.record,
        field: w.field ?? "",
        message: w.message,
      })),
    },
    candidates: input.candidates.map((c) => ({
      topic: c.topic,
      sessions: [...c.sessions],
      items: c.items.map((item) => ({ ...itemView(item), session_id: item.sessionId })),
    })),
  };
}

/** The input message, rendered through the catalog (every word the model reads is a catalog value). */
export function renderConsolidationInput(prompts: MemoryPrompts, input: ConsolidationInput): string {
  return prompts.render("memory_consolidation_input", consolidationInputContext(input));
}
