import { createHash, randomUUID } from "node:crypto";
import { join } from "node:path";
import { NotFoundError } from "@podkit/session-store";
import { canonicalJson } from "../context/context-key.js";
import { PodUsageError } from "../errors.js";
import { loadPodResources } from "../resources/load-pod-resources.js";
import { EvalCaseError } from "./errors.js";
import { EvalDir } from "./eval-dir.js";
import { checkCodePrices } from "./eval-prices.js";
import { selectRecordedSessions } from "./eval-query.js";
import type {
  EvalCase,
  EvalItemResult,
  EvalReport,
  EvalRunTotals,
  EvalTotals,
  RunEvalOptions,
  Scorer,
} from "./eval-types.js";
import { variantManifest, variantOrigin } from "./eval-variant.js";
import { type JudgeSetup, judgeScorer } from "./judge.js";
import { readRecordedTurns } from "./recorded-turns.js";
import { type ItemContext, type PreparedCase, runEvalItem } from "./run-eval-item.js";
import { builtinScorers } from "./scorers.js";

/** Items run at once unless `concurrency` says otherwise. */
export const DEFAULT_EVAL_CONCURRENCY = 2;

const EVAL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Evaluates a variant (a manifest, a model, a prompt pack) against cases: recorded sessions (or a
 * turn range of one) replayed input by input, and plain inputs. Every item is a new session in
 * `store` that starts with an `eval.origin` entry and ends with its `eval.score` entries; tools
 * answer from the recording (`replay`, the default), run in a scratch copy of the workspace
 * (`live`) or return a fixed result (`stub`). Each case is scored with the builtin deterministic
 * scorers and `scorers`, against its recording's baseline. Finished items are written to
 * `<evals dir>/<eval id>/items/`; rerunning with the same `evalId` does not redo them.
 * Bad cases (an unknown session, a turn range outside it) fail with `EvalCaseError` before any
 * item runs.
 */
export async function runEval(options: RunEvalOptions): Promise<EvalReport> {
  const evalId = options.evalId ?? `eval-${randomUUID()}`;
  if (!EVAL_ID.test(evalId)) {
    throw new PodUsageError(`eval id ${JSON.stringify(evalId)} is not a file name`, {
      hint: "use letters, digits, '.', '_' and '-' (at most 128), starting with a letter or digit",
    });
  }
  const concurrency = options.concurrency ?? DEFAULT_EVAL_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new PodUsageError(`concurrency must be a whole number ≥ 1, not ${concurrency}`);
  }
  const manifest = variantManifest(options.variant);
  const prices = options.prices === undefined ? {} : checkCodePrices(options.prices);
  const models = {
    item: manifest.manifest.model.ref,
    baseline: options.baselineModel ?? manifest.manifest.model.ref,
  };
  const cases = await expandQueries(options);
  const prepared = await Promise.all(cases.map((c, index) => prepareCase(c, index, options)));
  const judges = await judgeScorers(options);
  const origin = variantOrigin(options.variant);
  const evalsDir = options.evalsDir ?? join(manifest.dataDir, "evals");
  const dir = await EvalDir.open(evalsDir, evalId, {
    eval_id: evalId,
    variant: origin,
    cases: prepared.map((p) => ({ key: p.key, name: p.name })),
  });
  const finished = await dir.finished();
  const context: ItemContext = {
    evalId,
    options,
    manifest,
    scorers: [...builtinScorers(options.scoring), ...(options.scorers ?? []), ...judges],
    origin,
    prices: { item: prices[models.item], baseline: prices[models.baseline] },
  };

  options.onStart?.(prepared.length);
  const results: EvalItemResult[] = new Array(prepared.length);
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (next < prepared.length) {
      const index = next++;
      const item = prepared[index] as PreparedCase;
      options.signal?.throwIfAborted();
      const before = finished.get(item.key);
      const result = before === undefined ? await runEvalItem(item, context) : { ...before, resumed: true };
      if (before === undefined) await dir.write(result);
      results[index] = result;
      done += 1;
      options.onItem?.(result, done, prepared.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, prepared.length) }, worker));
  const passed = results.filter((r) => r.pass).length;
  return {
    evalId,
    dir: dir.dir,
    items: results,
    passed,
    failed: results.length - passed,
    tolerance: options.tolerance ?? 0,
    models,
    totals: {
      item: sumTotals(results.map((r) => r.item)),
      baseline: results.some((r) => r.baseline !== null)
        ? sumTotals(results.flatMap((r) => (r.baseline === null ? [] : [r.baseline])))
        : null,
    },
  };
}

/** The cases with every `{where}` replaced by the recorded sessions it selects, in order. */
async function expandQueries(options: RunEvalOptions): Promise<EvalCase[]> {
  const cases: EvalCase[] = [];
  for (const entry of options.cases) {
    if ("where" in entry)
      cases.push(...(await selectRecordedSessions(options.store, entry.where, options.now)));
    else cases.push(entry);
  }
  return cases;
}

/** The eval's judges, each resolved (rubric, model) before any item runs. */
async function judgeScorers(options: RunEvalOptions): Promise<Scorer[]> {
  const judges = options.judges ?? [];
  if (judges.length === 0) return [];
  const names = judges.map((judge) => judge.name ?? "judge");
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice !== undefined) {
    throw new PodUsageError(`two judges are named ${JSON.stringify(twice)}`, {
      hint: "give each judge its own name",
    });
  }
  // The judge's prompts are the project's (its catalog layers), not the variant's --pack: the
  // item and its baseline, and one variant and the next, are graded by the same words.
  const { catalog } = await loadPodResources(options.variant.manifest, {
    ...(options.podOptions?.onWarning === undefined ? {} : { onWarning: options.podOptions.onWarning }),
  });
  const setup: JudgeSetup = {
    catalog,
    manifest: options.variant.manifest,
    variantModel: options.variant.model,
    env: options.podOptions?.env ?? process.env,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const scorers: Scorer[] = [];
  for (const judge of judges) scorers.push(await judgeScorer(judge, setup));
  return scorers;
}

/** Sums of run totals; the cost is null as soon as one is unknown (or was written before costs were). */
function sumTotals(runs: readonly EvalRunTotals[]): EvalTotals {
  const sum = (pick: (t: EvalRunTotals) => number | undefined) =>
    runs.reduce((total, t) => total + (pick(t) ?? 0), 0);
  const inputTokens = sum((t) => t.inputTokens);
  const cacheReadTokens = sum((t) => t.cacheReadTokens);
  const costs = runs.map((t) => t.cost);
  return {
    requests: sum((t) => t.requests),
    inputTokens,
    outputTokens: sum((t) => t.outputTokens),
    cacheReadTokens,
    cacheWriteTokens: sum((t) => t.cacheWriteTokens),
    cacheShare: inputTokens === 0 ? 0 : cacheReadTokens / inputTokens,
    cost: costs.every((c) => typeof c === "number")
      ? costs.reduce((a, b) => (a as number) + (b as number), 0)
      : null,
  };
}

/** A case's name as reports show it: `<session>`, `<session>:<from>-<to>`, or its `name`. */
export function caseName(evalCase: EvalCase, index: number): string {
  if (evalCase.name !== undefined) return evalCase.name;
  if ("sessionId" in evalCase) {
    const { fromTurn, toTurn } = evalCase;
    if (fromTurn === undefined && toTurn === undefined) return evalCase.sessionId;
    return `${evalCase.sessionId}:${fromTurn ?? 1}-${toTurn ?? ""}`;
  }
  return `input #${index + 1}`;
}

async function prepareCase(
  evalCase: EvalCase,
  index: number,
  options: RunEvalOptions,
): Promise<PreparedCase> {
  const name = caseName(evalCase, index);
  const digest = createHash("sha256").update(canonicalJson(evalCase)).digest("hex").slice(0, 12);
  const key = `${String(index + 1).padStart(4, "0")}-${digest}`;
  if (!("sessionId" in evalCase)) {
    const inputs = typeof evalCase.input === "string" ? [evalCase.input] : [...evalCase.input];
    if (inputs.length === 0)
      throw new EvalCaseError(name, "it has no input", { hint: "give at least one input" });
    return {
      key,
      name,
      case: evalCase,
      inputs,
      sourceSessionId: null,
      fromTurn: null,
      toTurn: null,
      recorded: [],
      baseline: undefined,
    };
  }
  let recorded: Awaited<ReturnType<typeof readRecordedTurns>>;
  try {
    recorded = await readRecordedTurns(options.store, evalCase.sessionId);
  } catch (error) {
    if (NotFoundError.isInstance(error))
      throw new EvalCaseError(name, "no such session in the store", { cause: error });
    throw error;
  }
  const last = recorded.at(-1)?.turn ?? 0;
  const fromTurn = evalCase.fromTurn ?? 1;
  const toTurn = evalCase.toTurn ?? last;
  if (fromTurn < 1 || toTurn < fromTurn || toTurn > last) {
    throw new EvalCaseError(
      name,
      `turns ${fromTurn}-${toTurn} are not in the session (it has turns 1-${last})`,
      {
        hint: `pick a range within 1-${last}; \`podkit session show ${evalCase.sessionId}\` lists its turns`,
      },
    );
  }
  const baseline = recorded.filter(
    (t) => t.turn >= fromTurn && t.turn <= toTurn && t.trigger === "user" && t.input !== null,
  );
  if (baseline.length === 0) {
    throw new EvalCaseError(name, `turns ${fromTurn}-${toTurn} hold no user input to replay`);
  }
  return {
    key,
    name,
    case: evalCase,
    inputs: baseline.map((t) => t.input as string),
    sourceSessionId: evalCase.sessionId,
    fromTurn,
    toTurn,
    recorded,
    baseline,
  };
}
