import type { StagingEntry } from "../extract/extract-schema.js";
import type { ParsedRecord } from "../lint/lint-record.js";
import { PROTECTION_THRESHOLD, type UsageCount } from "../store/usage-log.js";
import type { KnowledgeCandidate } from "./candidate-report.js";
import type { TidyHints } from "./tidy-hints.js";

/** Everything the consolidation worker is given in its one input message. */
export interface ConsolidationInput {
  readonly staging: readonly StagingEntry[];
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

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** Splits records into those shown in full (newest first, within the budget) and the rest. */
function withinBudget(
  records: readonly ParsedRecord[],
  budget: number,
): { full: Set<ParsedRecord>; rest: ParsedRecord[] } {
  const byRecent = [...records].sort((a, b) =>
    String(b.frontmatter.updated_at ?? "").localeCompare(String(a.frontmatter.updated_at ?? "")),
  );
  const full = new Set<ParsedRecord>();
  const rest: ParsedRecord[] = [];
  let used = 0;
  for (const record of byRecent) {
    if (used + record.text.length <= budget) {
      full.add(record);
      used += record.text.length;
    } else {
      rest.push(record);
    }
  }
  return { full, rest };
}

function fullText(records: readonly ParsedRecord[], full: ReadonlySet<ParsedRecord>, empty: string): string {
  if (records.length === 0) return empty;
  const shown = records.filter((r) => full.has(r)).map((r) => `### ${r.slug}\n\n${r.text.trimEnd()}`);
  const listed = records.filter((r) => !full.has(r));
  if (listed.length > 0) {
    shown.push(
      `${listed.length} more not shown in full (over the input budget); read them with memory_read when a staging entry concerns them:`,
      listed.map((r) => `- ${r.slug}: ${r.body.split("\n", 1)[0]?.slice(0, 120) ?? ""}`).join("\n"),
    );
  }
  return shown.join("\n\n");
}

/**
 * The input message in fixed sections: staging entries (with their code-attached sources), the
 * full summary, decisions and requests, the usage report, tidy hints and the knowledge candidate
 * report. Existing knowledge is not included; the worker looks it up with `knowledge_query`.
 */
export function renderConsolidationInput(input: ConsolidationInput): string {
  const usage =
    input.usage.length === 0
      ? "(no usage recorded yet)"
      : [
          `Records used (memory_read) at least ${PROTECTION_THRESHOLD} times are protected: do not drop them or compress them heavily.`,
          ...input.usage.map(
            (u) =>
              `- ${u.kind} ${u.slug}: used ${u.used}, shown ${u.shown}${u.used >= PROTECTION_THRESHOLD ? " (protected)" : ""}`,
          ),
        ].join("\n");
  const h = input.hints;
  const { full } = withinBudget(
    [...input.decisions, ...input.requests],
    input.fullTextBudget ?? FULL_TEXT_BUDGET,
  );
  const hints = [
    `Replaced chains (oldest -> newest): ${h.replacedChains.length === 0 ? "none" : ""}`,
    ...h.replacedChains.map((c) => `- ${c.join(" -> ")}`),
    `Records with more than 10 sources: ${h.sourcesOverflow.length === 0 ? "none" : ""}`,
    ...h.sourcesOverflow.map((r) => `- ${r.kind} ${r.slug}: ${r.sources} sources`),
    `Similar slugs: ${h.similarSlugs.length === 0 ? "none" : ""}`,
    ...h.similarSlugs.map((s) => `- ${s.kind}: ${s.slugs.join(" / ")}`),
    `Linter warnings: ${h.lintWarnings.length === 0 ? "none" : ""}`,
    ...h.lintWarnings.map(
      (w) => `- ${w.record}${w.field === undefined ? "" : ` (${w.field})`}: ${w.message}`,
    ),
  ].join("\n");
  const candidates =
    input.candidates.length === 0
      ? "No topic recurs across two sessions: create no new knowledge in this run (updating existing knowledge is allowed)."
      : json(input.candidates);
  return [
    "# Staging entries to integrate",
    json(input.staging),
    "# memory/summary.md",
    input.summary === undefined ? "(no summary yet)" : input.summary.text.trimEnd(),
    "# Decisions (memory/decisions/)",
    fullText(input.decisions, full, "(none)"),
    "# Requests (memory/requests/)",
    fullText(input.requests, full, "(none)"),
    "# Usage report",
    usage,
    "# Tidy hints",
    hints,
    "# Knowledge candidate report",
    candidates,
  ].join("\n\n");
}
