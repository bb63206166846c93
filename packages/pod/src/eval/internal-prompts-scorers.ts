import type { EvalItemView, EvalScore, Scorer } from "./eval-types.js";
import type { InternalItemView, InternalScorer } from "./internal-prompts-types.js";
import type { RecordedTurn } from "./recorded-turns.js";
import { runOf } from "./run-eval-item.js";
import { meanScore, runScorers } from "./scorers.js";

/**
 * The builtin `checklist` scorer: the share of the checklist's texts found in what survived
 * (case and runs of white space ignored); passes when every one is there.
 */
export const checklistScorer: InternalScorer = (item) => {
  if (item.checklist.length === 0)
    return { name: "checklist", score: 1, pass: true, detail: "empty checklist" };
  const survived = normalized(item.survived);
  const missing = item.checklist.filter((text) => !survived.includes(normalized(text)));
  const score = (item.checklist.length - missing.length) / item.checklist.length;
  return {
    name: "checklist",
    score,
    pass: missing.length === 0,
    ...(missing.length === 0 ? {} : { detail: `lost: ${missing.map((m) => JSON.stringify(m)).join(", ")}` }),
  };
};

/** What a judge is told the summary answers (it sees the summary as the answer to this). */
const SUMMARY_TASK =
  "(the runtime's compaction request) Write the summary that replaces the older part of the conversation: everything needed to go on without asking the user again.";

/**
 * An eval scorer (a judge: `judgeScorer`) run on a compaction: it sees one turn whose answer is
 * the summary, and the recorded compaction's summary as the reference answer.
 */
export function summaryScorer(scorer: Scorer): InternalScorer {
  const adapted: InternalScorer = (item) => scorer(summaryItem(item));
  Object.defineProperty(adapted, "name", { value: scorer.name });
  return adapted;
}

function summaryItem(item: InternalItemView): EvalItemView {
  const turn = (answer: string): RecordedTurn => ({
    turn: 1,
    trigger: "user",
    input: SUMMARY_TASK,
    toolCalls: [],
    answer,
    usage: { requests: 0, inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 },
    status: "finished",
  });
  return {
    ...runOf([turn(item.summary)]),
    case: { sessionId: item.case.sessionId },
    baseline: item.baseline === undefined ? undefined : runOf([turn(item.baseline.summary)]),
    divergences: [],
    stop: "finished",
  };
}

/** Runs every scorer as `runEval` does (`runScorers`): clamped into 0..1, a broken one fails the item. */
export function scoreInternal(
  scorers: readonly InternalScorer[],
  item: InternalItemView,
): Promise<EvalScore[]> {
  return runScorers(scorers, item);
}

/** The scores of an item (and of its baseline), written as `eval.score` entries, and its verdict. */
export interface ScoredOutcome {
  readonly score: number;
  readonly baselineScore: number | null;
  readonly difference: number | null;
  readonly scores: (EvalScore & { readonly baseline: EvalScore | null })[];
  /** A scorer failed (a judge that could not grade): the item fails with this message. */
  readonly error?: string;
  /** No scorer failed, and not regressed beyond the tolerance (without a baseline: every scorer passed). */
  readonly pass: boolean;
}

/**
 * Scores an item and its baseline with the same scorers, appends one `eval.score` entry per
 * scorer through `append`, and gives the verdict.
 */
export async function scoreOutcome(
  context: {
    readonly scorers: readonly InternalScorer[];
    readonly evalId: string;
    readonly tolerance: number;
  },
  view: InternalItemView,
  append: (payload: unknown) => Promise<void>,
): Promise<ScoredOutcome> {
  const scores = await scoreInternal(context.scorers, view);
  const baselineScores =
    view.baseline === undefined
      ? undefined
      : await scoreInternal(context.scorers, { ...view, ...view.baseline });
  for (const [index, score] of scores.entries()) {
    await append({
      ...score,
      baseline_score: baselineScores?.[index]?.score ?? null,
      eval_id: context.evalId,
    });
  }
  const score = meanScore(scores);
  const baselineScore = baselineScores === undefined ? null : meanScore(baselineScores);
  const difference = baselineScore === null ? null : score - baselineScore;
  // A scorer that failed (a judge that could not grade) fails the item: it is not a score of 0.
  const failed = [...scores, ...(baselineScores ?? [])].find((s) => s.error !== undefined);
  return {
    score,
    baselineScore,
    difference,
    scores: scores.map((s, index) => ({ ...s, baseline: baselineScores?.[index] ?? null })),
    ...(failed === undefined ? {} : { error: `scorer ${failed.name} failed: ${failed.error}` }),
    pass:
      failed === undefined &&
      (difference === null ? scores.every((s) => s.pass) : difference >= -context.tolerance - 1e-9),
  };
}

function normalized(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}
