import { canonicalJson } from "../context/context-key.js";
import { toOutputSchema } from "../output/output-schema.js";
import type { EvalItemView, EvalRun, EvalScore, EvalScoring, Scorer } from "./eval-types.js";
import type { RecordedTurn } from "./recorded-turns.js";

/**
 * The builtin deterministic scorers, for the settings given:
 * - `answer`: each turn's answer (its typed answer when it gave one, else its text) equals the
 *   expected one — the case's `expected` for its last turn, else the baseline's turn's answer;
 * - `schema` (with `output`): each turn's typed answer matches the schema;
 * - `trajectory`: the tools called, in order, are the baseline's (longest common subsequence over
 *   the longer list), and none of `forbiddenTools` was called (score 0 if one was);
 * - `budget` (with `budget`): requests and tokens within their caps;
 * - `cache_share` (with `minCacheShare`): the cache-read share of the input tokens reaches it (score
 *   1, else the share over the minimum). Every report carries the share either way.
 */
export function builtinScorers(scoring: EvalScoring = {}): Scorer[] {
  const scorers: Scorer[] = [answerScorer];
  if (scoring.output !== undefined) scorers.push(schemaScorer(scoring.output));
  scorers.push(trajectoryScorer(scoring.forbiddenTools ?? []));
  if (scoring.budget !== undefined) scorers.push(budgetScorer(scoring.budget));
  if (scoring.minCacheShare !== undefined) scorers.push(cacheShareScorer(scoring.minCacheShare));
  return scorers;
}

/** What a turn answered: its typed answer when it gave one, else its text, trimmed. */
export function answerOf(turn: RecordedTurn | undefined): unknown {
  if (turn === undefined) return undefined;
  return turn.output !== undefined ? turn.output : turn.answer.trim();
}

function sameAnswer(actual: unknown, expected: unknown): boolean {
  if (typeof expected === "string" && typeof actual === "string") return actual.trim() === expected.trim();
  return canonicalJson(actual ?? null) === canonicalJson(expected ?? null);
}

const answerScorer: Scorer = (item) => {
  const expected = expectedAnswers(item);
  if (expected.length === 0) return { name: "answer", score: 1, pass: true, detail: "nothing expected" };
  const misses: string[] = [];
  for (const [index, want] of expected.entries()) {
    if (want === undefined) continue;
    const got = answerOf(item.turns[index]);
    if (!sameAnswer(got, want.value)) misses.push(`turn ${index + 1}: ${short(got)} ≠ ${short(want.value)}`);
  }
  const counted = expected.filter((want) => want !== undefined).length;
  const score = counted === 0 ? 1 : (counted - misses.length) / counted;
  return {
    name: "answer",
    score,
    pass: misses.length === 0,
    ...(misses.length === 0 ? {} : { detail: misses.join("; ") }),
  };
};

/** Per turn of the case, what its answer should be (undefined: not checked). */
function expectedAnswers(item: EvalItemView): ({ value: unknown } | undefined)[] {
  const count = Math.max(item.baseline?.turns.length ?? 0, item.turns.length, 1);
  const expected: ({ value: unknown } | undefined)[] = [];
  for (let i = 0; i < count; i++) {
    const recorded = item.baseline?.turns[i];
    expected.push(recorded === undefined ? undefined : { value: answerOf(recorded) });
  }
  if ("expected" in item.case && item.case.expected !== undefined) {
    expected[Math.max(item.turns.length, item.baseline?.turns.length ?? 0, 1) - 1] = {
      value: item.case.expected,
    };
  }
  return expected;
}

function schemaScorer(output: NonNullable<EvalScoring["output"]>): Scorer {
  const schema = toOutputSchema(output);
  return (item) => {
    const problems: string[] = [];
    for (const [index, turn] of item.turns.entries()) {
      if (turn.output === undefined) problems.push(`turn ${index + 1}: no typed answer`);
      else {
        const checked = schema.validate(turn.output);
        if (!checked.ok)
          problems.push(`turn ${index + 1}: ${checked.issues.map((i) => i.message).join(", ")}`);
      }
    }
    const total = Math.max(item.turns.length, 1);
    return {
      name: "schema",
      score: (total - problems.length) / total,
      pass: problems.length === 0,
      ...(problems.length === 0 ? {} : { detail: problems.join("; ") }),
    };
  };
}

/** The names of the tools a run called, in order. */
export function toolsCalled(run: Pick<EvalRun, "turns">): string[] {
  return run.turns.flatMap((turn) => turn.toolCalls.map((call) => call.name));
}

function trajectoryScorer(forbidden: readonly string[]): Scorer {
  return (item) => {
    const called = toolsCalled(item);
    const banned = called.filter((name) => forbidden.includes(name));
    if (banned.length > 0) {
      return {
        name: "trajectory",
        score: 0,
        pass: false,
        detail: `forbidden: ${[...new Set(banned)].join(", ")}`,
      };
    }
    if (item.baseline === undefined) return { name: "trajectory", score: 1, pass: true };
    const expected = toolsCalled(item.baseline);
    const longer = Math.max(called.length, expected.length);
    const score = longer === 0 ? 1 : commonSubsequence(called, expected) / longer;
    return {
      name: "trajectory",
      score,
      pass: score === 1,
      ...(score === 1 ? {} : { detail: `called [${called.join(", ")}], recorded [${expected.join(", ")}]` }),
    };
  };
}

function budgetScorer(budget: NonNullable<EvalScoring["budget"]>): Scorer {
  return (item) => {
    const over: string[] = [];
    if (budget.maxRequests !== undefined && item.requests > budget.maxRequests)
      over.push(`${item.requests} requests > ${budget.maxRequests}`);
    const tokens = item.inputTokens + item.outputTokens;
    if (budget.maxTokens !== undefined && tokens > budget.maxTokens)
      over.push(`${tokens} tokens > ${budget.maxTokens}`);
    return {
      name: "budget",
      score: over.length === 0 ? 1 : 0,
      pass: over.length === 0,
      ...(over.length === 0 ? {} : { detail: over.join("; ") }),
    };
  };
}

function cacheShareScorer(min: number): Scorer {
  return (item) => ({
    name: "cache_share",
    score: item.cacheShare >= min ? 1 : item.cacheShare / min,
    pass: item.cacheShare >= min,
    detail: `${item.cacheReadTokens} of ${item.inputTokens} input tokens read from the cache (at least ${Math.round(min * 100)}% wanted)`,
  });
}

/**
 * Runs every scorer, clamping scores into 0..1. A scorer that throws, or returns no
 * `{name, score, pass}`, scores 0 with its `error`: the item fails with it (a broken scorer or a
 * judge that could not grade says nothing about the variant, and must not pass as a tie).
 */
export function scoreItem(scorers: readonly Scorer[], item: EvalItemView): Promise<EvalScore[]> {
  return runScorers(scorers, item);
}

/** `scoreItem` for any kind of item (a replayed turn range, an internal prompt's result). */
export async function runScorers<T>(
  scorers: readonly ((item: T) => EvalScore | Promise<EvalScore>)[],
  item: T,
): Promise<EvalScore[]> {
  const scores: EvalScore[] = [];
  for (const scorer of scorers) {
    try {
      const result = await scorer(item);
      if (
        typeof result?.name !== "string" ||
        typeof result.score !== "number" ||
        typeof result.pass !== "boolean"
      )
        throw new Error(`it returned ${short(result)}, not {name, score, pass}`);
      const score = Number.isFinite(result.score) ? Math.min(1, Math.max(0, result.score)) : 0;
      scores.push({ ...result, score });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      scores.push({
        name: scorer.name || "custom",
        score: 0,
        pass: false,
        detail: `the scorer failed: ${message}`,
        error: message,
      });
    }
  }
  return scores;
}

/** The mean of the scores (1 with none). */
export function meanScore(scores: readonly EvalScore[]): number {
  return scores.length === 0 ? 1 : scores.reduce((sum, s) => sum + s.score, 0) / scores.length;
}

function commonSubsequence(a: readonly string[], b: readonly string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    let previous = 0;
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j] as number;
      row[j] = x === b[j - 1] ? previous + 1 : Math.max(row[j] as number, row[j - 1] as number);
      previous = saved;
    }
  }
  return row[b.length] as number;
}

function short(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : canonicalJson(value ?? null);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
