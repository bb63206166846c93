import { createHash } from "node:crypto";
import { type Item, type ModelAdapter, ToolServer, Worker } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { z } from "zod";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import { PodUsageError } from "../errors.js";
import { toOutputSchema } from "../output/output-schema.js";
import { PodOutput } from "../output/pod-output.js";
import { type ModelOverride, podModelAdapter } from "../pod/model.js";
import { EvalJudgeError } from "./errors.js";
import type { EvalJudge, EvalScore, Scorer } from "./eval-types.js";
import { judgeInputContext } from "./judge-input.js";

/** What a judge answers with: its typed answer. */
const GRADE_SCHEMA = toOutputSchema(
  z.object({
    score: z.number().min(0).max(1).describe("0 (does not meet the rubric at all) to 1 (fully meets it)"),
    reason: z.string().describe("one or two sentences naming what decided the score"),
  }),
);

/** Corrections of a grade that breaks the schema before the judge fails (as `[output] max_repairs`). */
const JUDGE_MAX_REPAIRS = 2;
/** Default `threshold`. */
export const DEFAULT_JUDGE_THRESHOLD = 0.5;

/**
 * The judge's request settings: fixed, so the same item always makes the same request (replay
 * against a double is reproducible; a provider's answer to it is as stable as temperature 0 makes it).
 */
const JUDGE_CONFIG = { max_tokens: 1024, temperature: 0 } as const;

/** What every judge of an eval shares. */
export interface JudgeSetup {
  /** The catalog the judge's prompts come from (the variant manifest's layers, without its `--pack`). */
  readonly catalog: PromptCatalog;
  /** The variant's manifest: its `[model]` is the default judge model. */
  readonly manifest: LoadedManifest;
  /** The variant's model override (`PodOptions.model`), used when the judge names no model. */
  readonly variantModel: ModelOverride | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal;
}

/**
 * A judge scorer: for each item (and its baseline) a throw-away worker with the catalog's
 * `eval_judge_system` (the rubric in it) is shown the item through `eval_judge_input` and answers
 * through the typed-answer tool (the pod's `PodOutput`: `final_answer` with `{score, reason}`,
 * repaired up to twice). Nothing is persisted; the score is the item's `eval.score` entry like any
 * other. The rubric and the model are resolved here, before any item runs: a bad rubric reference,
 * model ref or missing API key fails the eval at once. A judge that fails on an item (its model
 * errs, or it never gives a valid grade) throws `EvalJudgeError`: the item fails, it is not a 0.
 */
export async function judgeScorer(judge: EvalJudge, setup: JudgeSetup): Promise<Scorer> {
  const name = judge.name ?? "judge";
  const threshold = judge.threshold ?? DEFAULT_JUDGE_THRESHOLD;
  if (!(threshold >= 0 && threshold <= 1)) {
    throw new PodUsageError(`judge ${name}: threshold ${threshold} is not within 0..1`);
  }
  const { catalog } = setup;
  const rubric = await rubricText(judge.rubric, catalog);
  const output = (): PodOutput<{ score: number; reason: string }> =>
    new PodOutput({
      schema: GRADE_SCHEMA,
      maxRepairs: JUDGE_MAX_REPAIRS,
      catalog,
      maxRequests: JUDGE_MAX_REPAIRS + 1,
      record: async () => {},
      systemItem: (text): Item => ({ type: "message", role: "system", content: [{ type: "text", text }] }),
    });
  const systemPrompt = catalog.render("eval_judge_system", { rubric, tool: output().toolName });
  const model = judgeModel(judge, setup);
  // Builds the provider's model now: a missing API key is a ConfigurationError before any item runs.
  await model.load();

  const scorer: Scorer = async (item) => {
    const input = catalog.render("eval_judge_input", judgeInputContext(item));
    const typed = output();
    const tools = new ToolServer();
    tools.registerTool(typed.tool());
    const digest = createHash("sha256").update(systemPrompt).update("\0").update(input).digest("hex");
    const worker = new Worker({
      model,
      systemPrompt,
      tools,
      config: { ...JUDGE_CONFIG },
      maxRequests: JUDGE_MAX_REPAIRS + 1,
      cache: { promptCacheKey: `eval-judge-${digest.slice(0, 32)}` },
      interceptor: {
        pendingHistoryAppends: () => typed.pendingItems(),
        afterToolBatch: ({ requests }) => typed.afterToolBatch(requests),
        onTurnEnd: (context) => typed.onTurnEnd(context),
      },
    });
    typed.startRun();
    try {
      await worker.run(input, setup.signal === undefined ? {} : { signal: setup.signal });
    } catch (error) {
      const cause = typed.errorOf(error);
      throw new EvalJudgeError(name, `could not grade: ${(cause as Error).message ?? String(cause)}`, {
        cause,
      });
    }
    const grade = typed.accepted?.value;
    if (grade === undefined) throw new EvalJudgeError(name, "gave no grade");
    const score: EvalScore = {
      name,
      score: grade.score,
      pass: grade.score >= threshold,
      detail: grade.reason.trim(),
    };
    return score;
  };
  Object.defineProperty(scorer, "name", { value: name });
  return scorer;
}

/** The rubric: the catalog's default, a `$prefix` prompt file rendered as a template, or the text given. */
async function rubricText(rubric: string | undefined, catalog: PromptCatalog): Promise<string> {
  if (rubric === undefined) return catalog.render("eval_judge_rubric").trim();
  if (!rubric.startsWith("$")) return rubric.trim();
  const template = await catalog.loader.load(rubric);
  return catalog.loader.environment.render(template, {}).text.trim();
}

/**
 * The judge's model adapter, resolved as the pod resolves `[model]`: a ref of the manifest's
 * provider keeps the manifest's `base_url` and `api_key_env`; another provider's uses its
 * defaults; no ref is the variant's own model (with its override).
 */
function judgeModel(judge: EvalJudge, setup: JudgeSetup): ModelAdapter {
  const manifestModel = setup.manifest.manifest.model;
  if (judge.model !== undefined && typeof judge.model !== "string") {
    return podModelAdapter(manifestModel, judge.model, setup.env);
  }
  if (judge.model === undefined) {
    return podModelAdapter(manifestModel, judge.baseUrl ?? setup.variantModel, setup.env);
  }
  const providerOf = (ref: string) => ref.slice(0, ref.indexOf("/"));
  const { base_url: _baseUrl, api_key_env: _keyEnv, ...rest } = manifestModel;
  const model =
    providerOf(judge.model) === providerOf(manifestModel.ref)
      ? { ...manifestModel, ref: judge.model }
      : { ...rest, ref: judge.model };
  return podModelAdapter(model, judge.baseUrl, setup.env);
}
