import { resolve } from "node:path";
import {
  type EvalCase,
  type EvalItemResult,
  type EvalJudge,
  type EvalPrices,
  type EvalQuery,
  EvalQueryError,
  type EvalReport,
  type QueryCase,
  readEvalDataset,
  readEvalPrices,
  runEval,
  type ToolMode,
} from "@podkit/pod";
import { type CommandContext, type CommandInput, stringList, stringOption } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";
import { type EvalProgress, evalProgress } from "../eval/eval-progress.js";
import { EVAL_REGRESSION_EXIT, renderEvalReport } from "../eval/eval-report.js";
import { loadScorerModules } from "../eval/scorer-modules.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { openStore } from "../session/open-store.js";
import { cliPodOptions } from "../session/pod-options.js";

const MODES: readonly ToolMode[] = ["replay", "live", "stub"];

/**
 * `podkit eval`: runs the eval, prints a table (or JSON), and with `--ci` exits
 * `EVAL_REGRESSION_EXIT` on a regression.
 */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  // `--internal <kind>` replays an internal prompt (a compaction, a memory extract) instead: ./eval-internal.ts.
  if (stringOption(input.values.internal) !== undefined)
    return (await import("./eval-internal.js")).runInternal(input, ctx);
  if (stringList(input.values["must-keep"]).length > 0)
    throw usage("--must-keep applies to an internal prompt's replay only", {
      hint: "add --internal compaction (or memory_extract), or leave --must-keep out",
    });
  const cases = await casesOf(input, ctx);
  const model = stringOption(input.values.model);
  const sets = stringList(input.values.set);
  const overlays = model === undefined ? sets : [...sets, `model.ref=${JSON.stringify(model)}`];
  const loaded = await loadPodManifest({ ...input, values: { ...input.values, set: overlays } }, ctx);
  // The recordings were made with the manifest's own model: the baseline is priced at it.
  const baselineModel =
    model === undefined ? loaded.manifest.model.ref : (await loadPodManifest(input, ctx)).manifest.model.ref;
  const scorers = await loadScorerModules(stringList(input.values.scorer), ctx.env.cwd);
  const judges = judgesOf(input);
  const pricesFile = stringOption(input.values.prices);
  const prices: EvalPrices | undefined =
    pricesFile === undefined ? undefined : await readEvalPrices(resolve(ctx.env.cwd, pricesFile));
  const toolMode = modeOf(stringOption(input.values.tools) ?? "replay", "--tools");
  const tools: Record<string, ToolMode> = {};
  for (const pair of stringList(input.values.tool)) {
    const at = pair.indexOf("=");
    if (at < 1) throw usage(`--tool ${pair}: expected name=mode`);
    tools[pair.slice(0, at)] = modeOf(pair.slice(at + 1), `--tool ${pair}`);
  }
  const tolerance = numberOption(input.values.tolerance, "--tolerance", 0, 0, 1);
  const concurrency = numberOption(input.values.concurrency, "--concurrency", 2, 1, 64);
  if (!Number.isInteger(concurrency)) throw usage("--concurrency: expected a whole number");
  const json = input.values.json === true;
  const ci = input.values.ci === true;
  const pack = stringOption(input.values.pack);
  const evalId = stringOption(input.values["eval-id"]);
  const manifestFile = stringOption(input.values.manifest);

  const store = await openStore(loaded, ctx.io.env);
  let report: EvalReport;
  let progress: EvalProgress | undefined;
  try {
    const { store: _store, ...podOptions } = cliPodOptions(ctx);
    report = await runEval({
      cases,
      store,
      variant: {
        manifest: loaded,
        ...(pack === undefined ? {} : { pack: resolve(ctx.env.cwd, pack) }),
        label: {
          ...(manifestFile === undefined ? {} : { manifest: manifestFile }),
          ...(model === undefined ? {} : { model }),
          set: sets,
        },
      },
      toolMode,
      tools,
      tolerance,
      concurrency,
      ...(evalId === undefined ? {} : { evalId }),
      podOptions,
      scorers,
      judges,
      ...(prices === undefined ? {} : { prices }),
      baselineModel,
      onStart: (total: number) => {
        progress = evalProgress(ctx.io.stderr, total);
      },
      onItem: (item: EvalItemResult, done: number, total: number) => progress?.item(item, done, total),
    });
  } finally {
    progress?.finish();
    await store.close();
  }
  ctx.io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : renderEvalReport(report));
  if (ci) ctx.io.stdout.write(`${report.passed} passed, ${report.failed} failed\n`);
  return ci && report.failed > 0 ? EVAL_REGRESSION_EXIT : 0;
}

/**
 * `--judge [<name>=]<rubric>`, repeatable: `default` is the catalog's `eval_judge_rubric`, anything
 * else a `$workspace/…` (or `$user/…`, `$podkit/…`) prompt file. `--judge-model` is every judge's model.
 */
export function judgesOf(input: CommandInput): EvalJudge[] {
  const judgeModel = stringOption(input.values["judge-model"]);
  return stringList(input.values.judge).map((spec) => {
    const at = spec.indexOf("=");
    const name = at > 0 ? spec.slice(0, at) : undefined;
    const rubric = at > 0 ? spec.slice(at + 1) : spec;
    if (rubric !== "default" && !rubric.startsWith("$")) {
      throw usage(`--judge ${spec}: expected default or a prompt file ($workspace/…, $user/…, $podkit/…)`, {
        hint: "put the rubric in .podkit/prompts/<name>.md and give --judge '$workspace/<name>'; docs/evals.md",
      });
    }
    const fallbackName =
      rubric === "default" ? "judge" : `judge:${rubric.slice(rubric.lastIndexOf("/") + 1)}`;
    return {
      name: name ?? fallbackName,
      ...(rubric === "default" ? {} : { rubric }),
      ...(judgeModel === undefined ? {} : { model: judgeModel }),
    };
  });
}

async function casesOf(input: CommandInput, ctx: CommandContext): Promise<(EvalCase | QueryCase)[]> {
  const cases: (EvalCase | QueryCase)[] = input.positionals.map(sessionCase);
  const dataset = stringOption(input.values.dataset);
  if (dataset !== undefined) cases.push(...(await readEvalDataset(resolve(ctx.env.cwd, dataset))));
  const where = stringList(input.values.where);
  if (where.length > 0) cases.push({ where: queryOf(where) });
  if (cases.length === 0) {
    throw usage("nothing to evaluate: name recorded sessions, give --where <filter> or --dataset <file>", {
      hint: "list recorded sessions with `podkit session list`; docs/evals.md shows a dataset file",
    });
  }
  return cases;
}

/**
 * `--where key=value`, repeatable, all of them holding: `since`/`until` (a date, a date-time, or
 * `7d`/`12h` back), `status` (comma-separated: any of them), `tool` (repeat for several: all),
 * `input` (a user input contains it), `limit` (the newest n). The values are checked by the query.
 */
function queryOf(pairs: readonly string[]): EvalQuery {
  const query: { -readonly [K in keyof EvalQuery]: EvalQuery[K] } = {};
  const tools: string[] = [];
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at < 1) throw usage(`--where ${pair}: expected key=value`);
    const key = pair.slice(0, at);
    const value = pair.slice(at + 1);
    if (key === "tool") tools.push(value);
    else if (key === "status") query.status = value.split(",") as EvalQuery["status"];
    else if (key === "since" || key === "until" || key === "input") query[key] = value;
    else if (key === "limit") {
      if (!/^\d+$/.test(value))
        throw new EvalQueryError("limit", `${JSON.stringify(value)} is not a whole number`);
      query.limit = Number(value);
    } else throw new EvalQueryError(key, "no such filter");
  }
  if (tools.length > 0) query.tool = tools;
  return query;
}

/** `<session>` or `<session>:<from>-<to>` (either end may be left out). */
function sessionCase(arg: string): EvalCase {
  const match = /^([^:]+)(?::(\d*)-(\d*))?$/.exec(arg);
  if (match === null) throw usage(`${arg}: expected <session> or <session>:<from>-<to>`);
  const [, sessionId, from, to] = match;
  return {
    sessionId: sessionId as string,
    ...(from === undefined || from === "" ? {} : { fromTurn: Number(from) }),
    ...(to === undefined || to === "" ? {} : { toTurn: Number(to) }),
  };
}

function modeOf(value: string, where: string): ToolMode {
  if ((MODES as readonly string[]).includes(value)) return value as ToolMode;
  throw usage(`${where}: unknown tool mode "${value}"`, { hint: "the modes are replay, live and stub" });
}

function numberOption(
  value: CommandInput["values"][string],
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = stringOption(value);
  if (text === undefined) return fallback;
  const number = Number(text);
  if (text.trim() === "" || !Number.isFinite(number) || number < min || number > max) {
    throw usage(`${name} ${text}: expected a number from ${min} to ${max}`);
  }
  return number;
}

function usage(message: string, options: { hint?: string } = {}): PodkitCliError {
  return new PodkitCliError(message, { hint: options.hint ?? "see `podkit eval --help`" });
}
