import type { EvalItemResult, EvalReport } from "@podkit/pod";

/**
 * The eval report as a terminal table: one row per case (score, baseline, difference,
 * divergences, tokens, cache-read share, pass), the divergences and failed scorers under it,
 * then the totals.
 */
export function renderEvalReport(report: EvalReport): string {
  const header = ["case", "score", "baseline", "diff", "diverg.", "tokens", "base tokens", "cache", "result"];
  const rows = report.items.map((item) => [
    item.caseName,
    fixed(item.score),
    item.baselineScore === null ? "-" : fixed(item.baselineScore),
    item.difference === null ? "-" : signed(item.difference),
    String(item.divergences.length),
    String(item.item.inputTokens + item.item.outputTokens),
    item.baseline === null ? "-" : String(item.baseline.inputTokens + item.baseline.outputTokens),
    percent(item.item.cacheShare),
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
  out.push(
    `${report.items.length} case${report.items.length === 1 ? "" : "s"}: ${report.passed} passed, ${report.failed} failed (tolerance ${report.tolerance}); ${divergences} divergence${divergences === 1 ? "" : "s"}; ${tokens} tokens`,
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

const fixed = (n: number) => n.toFixed(3);
const signed = (n: number) => (n > 0 ? `+${n.toFixed(3)}` : n === 0 ? "0" : n.toFixed(3));
const percent = (n: number) => `${Math.round(n * 100)}%`;
