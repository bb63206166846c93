import {
  type EvalCase,
  type EvalItemResult,
  type EvalReport,
  readEvalDataset,
  runEval,
  type ToolMode,
} from "@podkit/pod";
import { type CommandContext, type CommandInput, stringList, stringOption } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";
import { renderEvalReport } from "../eval/eval-report.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { openStore } from "../session/open-store.js";
import { cliPodOptions } from "../session/pod-options.js";

const MODES: readonly ToolMode[] = ["replay", "live", "stub"];

/** `podkit eval`: runs the eval, prints a table (or JSON), and with `--ci` fails on a regression. */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const cases = await casesOf(input, ctx);
  const model = stringOption(input.values.model);
  const sets = stringList(input.values.set);
  const overlays = model === undefined ? sets : [...sets, `model.ref=${JSON.stringify(model)}`];
  const loaded = await loadPodManifest({ ...input, values: { ...input.values, set: overlays } }, ctx);
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
  try {
    const { store: _store, ...podOptions } = cliPodOptions(ctx);
    report = await runEval({
      cases,
      store,
      variant: {
        manifest: loaded,
        ...(pack === undefined ? {} : { pack }),
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
      onItem: (item: EvalItemResult, done: number, total: number) =>
        ctx.io.stderr.write(
          `[${done}/${total}] ${item.caseName}${item.resumed ? " (finished before)" : ""}\n`,
        ),
    });
  } finally {
    await store.close();
  }
  ctx.io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : renderEvalReport(report));
  if (ci) ctx.io.stdout.write(`${report.passed} passed, ${report.failed} failed\n`);
  return ci && report.failed > 0 ? 1 : 0;
}

async function casesOf(input: CommandInput, ctx: CommandContext): Promise<EvalCase[]> {
  const cases: EvalCase[] = input.positionals.map(sessionCase);
  const dataset = stringOption(input.values.dataset);
  if (dataset !== undefined) {
    const { resolve } = await import("node:path");
    cases.push(...(await readEvalDataset(resolve(ctx.env.cwd, dataset))));
  }
  if (cases.length === 0) {
    throw usage("nothing to evaluate: name recorded sessions or give --dataset <file>", {
      hint: "list recorded sessions with `podkit session list`; docs/evals.md shows a dataset file",
    });
  }
  return cases;
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
