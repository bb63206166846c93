import type { LintDiagnostic } from "../lint/diagnostics.js";
import type { ParsedRecord } from "../lint/lint-record.js";
import type { Source } from "../records/record-schema.js";
import { similarSlugPairs } from "../records/slug.js";

/** Material for the tidy step: replaced chains, source overflow, similar slugs, linter warnings. */
export interface TidyHints {
  /** Chains of replaced decisions, oldest first, ending at the decision that is not replaced. */
  readonly replacedChains: readonly string[][];
  /** Records citing more than `SOURCES_OVERFLOW` sources. */
  readonly sourcesOverflow: readonly { kind: string; slug: string; sources: number }[];
  readonly similarSlugs: readonly { kind: string; slugs: [string, string] }[];
  readonly lintWarnings: readonly LintDiagnostic[];
}

export const SOURCES_OVERFLOW = 10;

export function tidyHints(
  records: readonly ParsedRecord[],
  lintWarnings: readonly LintDiagnostic[],
): TidyHints {
  const decisions = records.filter((r) => r.kind === "decision");
  const next = new Map<string, string>();
  for (const d of decisions)
    if (typeof d.frontmatter.replaced_by === "string") next.set(d.slug, d.frontmatter.replaced_by);
  const replacedTargets = new Set(next.values());
  const replacedChains: string[][] = [];
  for (const start of next.keys()) {
    if (replacedTargets.has(start)) continue; // not the oldest of its chain
    const chain = [start];
    let at = next.get(start);
    while (at !== undefined && !chain.includes(at)) {
      chain.push(at);
      at = next.get(at);
    }
    replacedChains.push(chain);
  }
  const sourcesOverflow = records.flatMap((r) => {
    const cited = (r.frontmatter.sources ?? r.frontmatter.last_sources) as Source[] | undefined;
    return cited !== undefined && cited.length > SOURCES_OVERFLOW
      ? [{ kind: r.kind, slug: r.slug, sources: cited.length }]
      : [];
  });
  const similarSlugs = (["decision", "request", "knowledge"] as const).flatMap((kind) =>
    similarSlugPairs(records.filter((r) => r.kind === kind).map((r) => r.slug)).map((slugs) => ({
      kind,
      slugs,
    })),
  );
  return {
    replacedChains,
    sourcesOverflow,
    similarSlugs,
    lintWarnings: lintWarnings.filter((w) => w.code !== "similar_slug"),
  };
}
