import type { EvalItemResult, EvalReport, EvalTotals } from "@podkit/pod";

/** `podkit eval --ci`'s exit code when a case regressed beyond the tolerance (docs/cli.md). */
export const EVAL_REGRESSION_EXIT = 5;

/**
 * The eval report as a terminal table: one row per case (score, baseline, difference,
 * divergences, tokens, cache-read share, with a price table the cost and the baseline's, pass),
 * the divergences and failed scorers under it, then the totals.
 */
export function renderEvalReport(report: EvalReport): string {
  // Reports of items written before costs were have no cost: read them as unknown.
  const costOf = (totals: { cost?: number | null } | null) => totals?.cost ?? null;
  const priced = report.items.some((i) => costOf(i.item) !== null || costOf(i.baseline) !== null);
  const header = [
    "case",
    "score",
    "baseline",
    "diff",
    "diverg.",
    "tokens",
    "base tokens",
    "cache",
    ...(priced ? ["cost", "base cost"] : []),
    "result",
  ];
  const rows = report.items.map((item) => [
    item.caseName,
    fixed(item.score),
    item.baselineScore === null ? "-" : fixed(item.baselineScore),
    item.difference === null ? "-" : signed(item.difference),
    String(item.divergences.length),
    String(item.item.inputTokens + item.item.outputTokens),
    item.baseline === null ? "-" : String(item.baseline.inputTokens + item.baseline.outputTokens),
    percent(item.item.cacheShare),
    ...(priced ? [usd(costOf(item.item)), usd(costOf(item.baseline))] : []),
    item.pass ? "pass" : "FAIL",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
      .join("  ")
      .trimEnd();
  const out = [`eval ${report.evalId} (${report.dir})`, line(header), ...rows.map(line)];
  for (const item of report.items) out.push(...notesOf(item));
  const tokens = report.items.reduce((sum, i) => sum + i.item.inputTokens + i.item.outputTokens, 0);
  const divergences = report.items.reduce((sum, i) => sum + i.divergences.length, 0);
  const cache = report.totals === undefined ? "" : ` (${percent(report.totals.item.cacheShare)} cache reads)`;
  out.push(
    `${report.items.length} case${report.items.length === 1 ? "" : "s"}: ${report.passed} passed, ${report.failed} failed (tolerance ${report.tolerance}); ${divergences} divergence${divergences === 1 ? "" : "s"}; ${tokens} tokens${cache}${priced ? `; ${costLine(report)}` : ""}`,
  );
  return `${out.join("\n")}\n`;
}

function notesOf(item: EvalItemResult): string[] {
  const notes: string[] = [];
  if (item.error !== undefined) notes.push(`  ${item.caseName}: error: ${item.error}`);
  else if (item.stop !== "finished") notes.push(`  ${item.caseName}: stopped ${item.stop}`);
  for (const d of item.divergences)
    notes.push(`  ${item.caseName}: turn ${d.turn}: ${d.tool} ${d.arguments} was not recorded`);
  for (const score of item.scores) {
    if (!score.pass && score.detail !== undefined)
      notes.push(`  ${item.caseName}: ${score.name}: ${score.detail}`);
  }
  return notes;
}

/** `cost $0.0123 (baseline $0.0150)`, `?` where an item's model has no price. */
function costLine(report: EvalReport): string {
  const total = (totals: EvalTotals | null | undefined) =>
    totals === null || totals === undefined ? "-" : usd(totals.cost);
  return `cost ${total(report.totals?.item)} (baseline ${total(report.totals?.baseline)})`;
}

const usd = (n: number | null) => (n === null ? "?" : `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`);
const fixed = (n: number) => n.toFixed(3);
const signed = (n: number) => (n > 0 ? `+${n.toFixed(3)}` : n === 0 ? "0" : n.toFixed(3));
const percent = (n: number) => `${Math.round(n * 100)}%`;
