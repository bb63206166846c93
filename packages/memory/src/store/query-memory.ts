import type { ParsedRecord } from "../lint/lint-record.js";
import type { RecordKind } from "../records/layout.js";

/** One line that matched, with its neighbours. */
export interface QueryMatch {
  /** 1-based line in the record file. */
  readonly line: number;
  readonly text: string;
  readonly before: readonly string[];
  readonly after: readonly string[];
}

/** A record with at least one matching line. */
export interface QueryHit {
  readonly kind: RecordKind;
  readonly slug: string;
  readonly path: string;
  readonly matches: readonly QueryMatch[];
}

export interface QueryOptions {
  /** Searched for case-insensitively, as a literal string, line by line. */
  query: string;
  kind?: RecordKind;
  /** Records returned at most (default 20). */
  limit?: number;
  /** Lines shown before and after each match (default 1). */
  context?: number;
}

/**
 * Case-insensitive literal search over the records' text (frontmatter and body), line by line,
 * with context lines; hits in kind then slug order, at most `limit` records.
 */
export function queryMemory(records: readonly ParsedRecord[], options: QueryOptions): QueryHit[] {
  const needle = options.query.toLowerCase();
  const limit = options.limit ?? 20;
  const context = options.context ?? 1;
  const hits: QueryHit[] = [];
  if (needle === "") return hits;
  for (const record of records) {
    if (options.kind !== undefined && record.kind !== options.kind) continue;
    if (!record.text.toLowerCase().includes(needle)) continue;
    const lines = record.text.split("\n");
    const matches: QueryMatch[] = [];
    lines.forEach((text, i) => {
      if (!text.toLowerCase().includes(needle)) return;
      matches.push({
        line: i + 1,
        text,
        before: lines.slice(Math.max(0, i - context), i),
        after: lines.slice(i + 1, i + 1 + context),
      });
    });
    hits.push({ kind: record.kind, slug: record.slug, path: record.path, matches });
    if (hits.length >= limit) break;
  }
  return hits;
}

/** A knowledge entry found by `queryKnowledge`: what the model needs to judge whether it fits. */
export interface KnowledgeHit {
  readonly slug: string;
  readonly kind: string;
  readonly description: string;
  readonly model_invocation: boolean;
  /** How many query terms matched, summed over slug, description, kind and body. */
  readonly score: number;
  /** The first body line holding a term, if any. */
  readonly excerpt?: string;
}

/**
 * Searches knowledge by slug, description, kind and body: every whitespace-separated term
 * (case-insensitive; hyphens in slugs count as spaces) must occur somewhere; best score first.
 */
export function queryKnowledge(records: readonly ParsedRecord[], query: string, limit = 10): KnowledgeHit[] {
  const terms = query
    .toLowerCase()
    .split(/\s+/)
    .filter((t) => t !== "");
  if (terms.length === 0) return [];
  const hits: KnowledgeHit[] = [];
  for (const record of records) {
    if (record.kind !== "knowledge") continue;
    const fm = record.frontmatter;
    const fields = [
      record.slug.replace(/-/g, " "),
      String(fm.description ?? ""),
      String(fm.kind ?? ""),
      record.body,
    ].map((f) => f.toLowerCase());
    let score = 0;
    let all = true;
    for (const term of terms) {
      const found = fields.reduce((n, field) => n + (field.includes(term) ? 1 : 0), 0);
      if (found === 0) all = false;
      score += found;
    }
    if (!all) continue;
    const excerpt = record.body.split("\n").find((line) => terms.some((t) => line.toLowerCase().includes(t)));
    hits.push({
      slug: record.slug,
      kind: String(fm.kind),
      description: String(fm.description),
      model_invocation: fm.model_invocation === true,
      score,
      ...(excerpt === undefined ? {} : { excerpt }),
    });
  }
  return hits.sort((a, b) => b.score - a.score || (a.slug < b.slug ? -1 : 1)).slice(0, limit);
}
