import { resolve } from "node:path";
import {
  INTERNAL_PROMPT_KINDS,
  type InternalCase,
  type InternalEvalItemResult,
  type InternalEvalReport,
  type InternalPromptKind,
  type MemoryExtractor,
  readInternalEvalDataset,
  runInternalEval,
} from "@podkit/pod";
import { type CommandContext, type CommandInput, stringList, stringOption } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";
import { EVAL_REGRESSION_EXIT } from "../eval/eval-report.js";
import { loadPodManifest } from "../session/load-pod-manifest.js";
import { openStore } from "../session/open-store.js";
import { cliPodOptions } from "../session/pod-options.js";
import { judgesOf } from "./eval.js";

/**
 * `podkit eval --internal compaction|memory_extract`: replays recorded compactions, or memory's
 * extract on recorded segments (`<session>` or `<session>@<segment>`, or a dataset's cases), with
 * the variant's catalog — `--pack` holds the changed `compact_system` or `memory_extract_system` —
 * and scores what survived (what was extracted) with the checklist (`--must-keep`, and each case's
 * `checklist`). Prints a table (or JSON); with `--ci`, `N passed, N failed` last and the
 * regression exit code.
 */
export async function runInternal(input: CommandInput, ctx: CommandContext): Promise<number> {
  const kind = kindOf(stringOption(input.values.internal) as string);
  const cases: InternalCase[] = input.positionals.map(caseOf);
  const dataset = stringOption(input.values.dataset);
  if (dataset !== undefined) cases.push(...(await readInternalEvalDataset(resolve(ctx.env.cwd, dataset))));
  if (cases.length === 0) {
    throw usage(
      `nothing to evaluate: name recorded sessions (<session> or <session>@<segment>) or give --dataset <file>`,
      {
        hint: "list recorded sessions with `podkit session list`; docs/evals.md shows an internal dataset",
      },
    );
  }
  const model = stringOption(input.values.model);
  const sets = stringList(input.values.set);
  const overlays = model === undefined ? sets : [...sets, `model.ref=${JSON.stringify(model)}`];
  const loaded = await loadPodManifest({ ...input, values: { ...input.values, set: overlays } }, ctx);
  const tolerance = bounded(input.values.tolerance, "--tolerance", 0, 1) ?? 0;
  const concurrency = bounded(input.values.concurrency, "--concurrency", 1, 64) ?? 2;
  if (!Number.isInteger(concurrency)) throw usage("--concurrency: expected a whole number");
  const pack = stringOption(input.values.pack);
  const evalId = stringOption(input.values["eval-id"]);
  const manifestFile = stringOption(input.values.manifest);
  const checklist = stringList(input.values["must-keep"]);
  // Judges grade what survived with a rubric from the catalog, as in a replay (docs/evals.md).
  const judges = judgesOf(input);

  const store = await openStore(loaded, ctx.io.env);
  let report: InternalEvalReport;
  try {
    const { store: _store, ...podOptions } = cliPodOptions(ctx);
    report = await runInternalEval({
      kind,
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
      ...(checklist.length === 0 ? {} : { checklist }),
      ...(judges.length === 0 ? {} : { judges }),
      ...(kind === "memory_extract" ? { extractor: memoryExtractor } : {}),
      tolerance,
      concurrency,
      ...(evalId === undefined ? {} : { evalId }),
      podOptions,
      onItem: (item: InternalEvalItemResult, done: number, total: number) =>
        ctx.io.stderr.write(
          `[${done}/${total}] ${item.caseName}${item.resumed ? " (finished before)" : ""}\n`,
        ),
    });
  } finally {
    await store.close();
  }
  const ci = input.values.ci === true;
  ctx.io.stdout.write(
    input.values.json === true ? `${JSON.stringify(report, null, 2)}\n` : renderInternalReport(report),
  );
  if (ci) ctx.io.stdout.write(`${report.passed} passed, ${report.failed} failed\n`);
  return ci && report.failed > 0 ? EVAL_REGRESSION_EXIT : 0;
}

/**
 * The internal eval as a table: one row per case (score, the recorded compaction's, difference,
 * the compacted history's estimated tokens and the recorded one's, pass), then what each item
 * lost or why it failed, then the totals.
 */
export function renderInternalReport(report: InternalEvalReport): string {
  const header = ["case", "score", "baseline", "diff", "tokens after", "base after", "result"];
  const rows = report.items.map((item) => [
    item.caseName,
    item.score.toFixed(3),
    item.baselineScore === null ? "-" : item.baselineScore.toFixed(3),
    item.difference === null ? "-" : signed(item.difference),
    item.tokensAfter === null ? "-" : String(item.tokensAfter),
    item.baselineTokensAfter === null ? "-" : String(item.baselineTokensAfter),
    item.pass ? "pass" : "FAIL",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
      .join("  ")
      .trimEnd();
  const out = [`eval ${report.evalId} (${report.kind}; ${report.dir})`, line(header), ...rows.map(line)];
  for (const item of report.items) {
    if (item.error !== undefined) out.push(`  ${item.caseName}: error: ${item.error}`);
    else if (item.stop !== "compacted" && item.stop !== "extracted")
      out.push(`  ${item.caseName}: not compacted: ${item.stop}`);
    for (const score of item.scores) {
      if (!score.pass && score.detail !== undefined)
        out.push(`  ${item.caseName}: ${score.name}: ${score.detail}`);
    }
  }
  const n = report.items.length;
  out.push(
    `${n} case${n === 1 ? "" : "s"}: ${report.passed} passed, ${report.failed} failed (tolerance ${report.tolerance})`,
  );
  return `${out.join("\n")}\n`;
}

/**
 * `@podkit/memory`'s extract on an item's session: what it staged, without the ids, times and
 * sources the code attaches (they differ from run to run), scored as JSON.
 */
const memoryExtractor: MemoryExtractor = async (job) => {
  const { runMemoryExtract } = await import("@podkit/memory");
  const result = await runMemoryExtract({
    sessions: job.store,
    sessionId: job.sessionId,
    workspace: job.workspace,
    model: job.model,
    prompts: job.prompts,
    language: job.language,
    ...(job.signal === undefined ? {} : { signal: job.signal }),
  });
  if (result.status !== "extracted") return [];
  return result.staged.map(({ decisions, discussions, attempts, requests }) => ({
    decisions,
    discussions,
    attempts,
    requests,
  }));
};

function kindOf(value: string): InternalPromptKind {
  if ((INTERNAL_PROMPT_KINDS as readonly string[]).includes(value)) return value as InternalPromptKind;
  throw usage(`--internal ${value}: unknown internal prompt`, {
    hint: `the internal prompts an eval replays: ${INTERNAL_PROMPT_KINDS.join(", ")}`,
  });
}

/** `<session>` or `<session>@<segment>`. */
function caseOf(arg: string): InternalCase {
  const match = /^([^@:]+)(?:@([^@:]+))?$/.exec(arg);
  if (match === null) throw usage(`${arg}: expected <session> or <session>@<segment>`);
  const [, sessionId, segmentId] = match;
  return { sessionId: sessionId as string, ...(segmentId === undefined ? {} : { segmentId }) };
}

function bounded(value: CommandInput["values"][string], name: string, min: number, max: number) {
  const text = stringOption(value);
  if (text === undefined) return undefined;
  const number = Number(text);
  if (text.trim() === "" || !Number.isFinite(number) || number < min || number > max) {
    throw usage(`${name} ${text}: expected a number from ${min} to ${max}`);
  }
  return number;
}

const signed = (n: number) => (n > 0 ? `+${n.toFixed(3)}` : n === 0 ? "0" : n.toFixed(3));

function usage(message: string, options: { hint?: string } = {}): PodkitCliError {
  return new PodkitCliError(message, { hint: options.hint ?? "see `podkit eval --help`" });
}
