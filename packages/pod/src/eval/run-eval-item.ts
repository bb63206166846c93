import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import {
  describeSession,
  type Entry,
  entriesThroughTurn,
  replay,
  SessionLog,
  type Store,
} from "@podkit/session-store";
import { Pod } from "../pod/pod.js";
import { requestConfig } from "../pod/pod-foundation.js";
import type { PodOptions } from "../pod/pod-options.js";
import { costOf } from "./eval-prices.js";
import { evalTools, withoutOwnTools } from "./eval-tools.js";
import {
  type Divergence,
  EVAL_ORIGIN_DOMAIN,
  EVAL_SCORE_DOMAIN,
  type EvalCase,
  type EvalItemResult,
  type EvalItemView,
  type EvalOrigin,
  type EvalRun,
  type EvalRunTotals,
  type ModelPrice,
  type RunEvalOptions,
  type Scorer,
} from "./eval-types.js";
import { type RecordedTurn, readRecordedTurns } from "./recorded-turns.js";
import { meanScore, scoreItem, toolsCalled } from "./scorers.js";
import { scratchWorkspace } from "./scratch-workspace.js";

/** A case made ready to run: its inputs, the recording it replays (if any) and its baseline. */
export interface PreparedCase {
  readonly key: string;
  readonly name: string;
  readonly case: EvalCase;
  readonly inputs: readonly string[];
  readonly sourceSessionId: string | null;
  readonly fromTurn: number | null;
  readonly toTurn: number | null;
  /** Every recorded turn of the source session: what `replay` tools answer from. */
  readonly recorded: readonly RecordedTurn[];
  /** The recorded turns the case replays; undefined for an input case. */
  readonly baseline: readonly RecordedTurn[] | undefined;
}

/** What every item of one eval shares. */
export interface ItemContext {
  readonly evalId: string;
  readonly options: RunEvalOptions;
  /** The variant's manifest, pack applied. */
  readonly manifest: LoadedManifest;
  readonly scorers: readonly Scorer[];
  readonly origin: EvalOrigin["variant"];
  /** The prices of the variant's model and of the recordings' (undefined: no cost). */
  readonly prices: { readonly item: ModelPrice | undefined; readonly baseline: ModelPrice | undefined };
}

/**
 * Runs one case as its own session: a new session whose `segment_start` carries the source's
 * history before the case's first turn (none for a whole session), then the `eval.origin` entry,
 * then the case's inputs turn by turn through a real pod built from the variant, then one
 * `eval.score` entry per scorer.
 */
export async function runEvalItem(prepared: PreparedCase, context: ItemContext): Promise<EvalItemResult> {
  const { options, manifest } = context;
  const store = options.store as Store<Item>;
  const divergences: Divergence[] = [];
  let turn = 0;
  const modeOf = (tool: string) => options.tools?.[tool] ?? options.toolMode ?? "replay";
  const scratches: (() => Promise<void>)[] = [];
  const tools = evalTools({
    manifest,
    extraPackages: options.podOptions?.toolPackages ?? [],
    modeOf,
    recorded: prepared.recorded,
    stubs: options.stubs ?? {},
    scratch: async () => {
      const scratch = await scratchWorkspace(manifest);
      scratches.push(scratch.dispose);
      return scratch.loaded;
    },
    turn: () => turn,
    onDivergence: (divergence) => divergences.push(divergence),
    ...(prepared.sourceSessionId === null ? {} : { source: { store, sessionId: prepared.sourceSessionId } }),
  });
  const anyLive = modeOf("") === "live" || Object.values(options.tools ?? {}).includes("live");
  const itemManifest = withoutOwnTools(manifest, modeOf);
  const podOptions: PodOptions = {
    ...(anyLive ? {} : { autoApprove: true }),
    // An item is a replay: no memory job extracts it into the workspace's memory (nor asks the model to).
    attachMemory: false,
    ...options.podOptions,
    store: options.store,
    toolPackages: [tools.package],
    ...(options.variant.model === undefined ? {} : { model: options.variant.model }),
    ...(options.scoring?.output === undefined ? {} : { output: options.scoring.output }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const origin: EvalOrigin = {
    source_session: prepared.sourceSessionId,
    from_turn: prepared.fromTurn,
    to_turn: prepared.toTurn,
    variant: context.origin,
    eval_id: context.evalId,
  };

  let pod: Pod | undefined;
  let stop = "finished";
  let error: string | undefined;
  try {
    pod = await openItemPod(itemManifest, podOptions, prepared, origin, store);
    pod.addHooks(tools.hooks);
    for (const input of prepared.inputs) {
      turn += 1;
      try {
        const result = await pod.run(input).result;
        stop = result.status;
      } catch (failure) {
        stop = "errored";
        error = failure instanceof Error ? failure.message : String(failure);
      }
      if (stop !== "finished") break;
    }
    const sessionId = pod.sessionId as string;
    const itemRun = runOf(await readRecordedTurns(store, sessionId));
    const baselineRun = prepared.baseline === undefined ? undefined : runOf(prepared.baseline);
    const view: EvalItemView = { ...itemRun, case: prepared.case, baseline: baselineRun, divergences, stop };
    const scores = await scoreItem(context.scorers, view);
    const baselineScores =
      baselineRun === undefined
        ? undefined
        : await scoreItem(context.scorers, {
            ...baselineRun,
            case: prepared.case,
            baseline: baselineRun,
            divergences: [],
            stop: "finished",
          });
    // Queued together, in order: the log's group commit writes them in one go.
    const scored = pod;
    await Promise.all(
      scores.map((score, index) =>
        scored.appendExtension(EVAL_SCORE_DOMAIN, {
          ...score,
          baseline_score: baselineScores?.[index]?.score ?? null,
          eval_id: context.evalId,
        }),
      ),
    );
    // A scorer that could not score fails the item: its 0 says nothing about the variant.
    const failedScorer = [...scores, ...(baselineScores ?? [])].find((s) => s.error !== undefined);
    if (error === undefined && failedScorer !== undefined)
      error = `scorer ${failedScorer.name} failed: ${failedScorer.error}`;
    const score = meanScore(scores);
    const baselineScore = baselineScores === undefined ? null : meanScore(baselineScores);
    const difference = baselineScore === null ? null : score - baselineScore;
    const tolerance = options.tolerance ?? 0;
    const pass =
      error === undefined &&
      (difference === null ? scores.every((s) => s.pass) : difference >= -tolerance - 1e-9);
    return {
      key: prepared.key,
      caseName: prepared.name,
      sessionId,
      sourceSessionId: prepared.sourceSessionId,
      fromTurn: prepared.fromTurn,
      toTurn: prepared.toTurn,
      score,
      baselineScore,
      difference,
      scores: scores.map((s, index) => ({ ...s, baseline: baselineScores?.[index] ?? null })),
      divergences,
      stop,
      ...(error === undefined ? {} : { error }),
      item: totalsOf(itemRun, context.prices.item),
      baseline: baselineRun === undefined ? null : totalsOf(baselineRun, context.prices.baseline),
      pass,
      resumed: false,
    };
  } finally {
    await pod?.close();
    for (const dispose of scratches) await dispose();
  }
}

/**
 * The item's pod on a new session that starts where the case starts: a whole session (or an
 * input case) from an empty history; a case from turn N > 1 with the source's history at the end
 * of turn N-1 under the variant's own system prompt. Either way `eval.origin` comes first.
 */
async function openItemPod(
  loaded: LoadedManifest,
  options: PodOptions,
  prepared: PreparedCase,
  origin: EvalOrigin,
  store: Store<Item>,
): Promise<Pod> {
  if (prepared.sourceSessionId === null || (prepared.fromTurn ?? 1) <= 1) {
    const pod = await Pod.fromManifest(loaded, options);
    try {
      await pod.startSession();
      await pod.appendExtension(EVAL_ORIGIN_DOMAIN, origin);
    } catch (error) {
      await pod.close();
      throw error;
    }
    return pod;
  }
  const history = await historyBefore(store, prepared.sourceSessionId, (prepared.fromTurn as number) - 1);
  const probe = await Pod.fromManifest(loaded, options);
  let systemPrompt: string;
  try {
    systemPrompt = await probe.renderSystemPrompt();
  } finally {
    await probe.close();
  }
  const log = await SessionLog.create(store, { systemPrompt, config: requestConfig(loaded), history });
  await log.append({ kind: "extension", domain: EVAL_ORIGIN_DOMAIN, payload: origin });
  return Pod.restore(loaded, log.sessionId, options);
}

/** The history of a session at the end of turn `turn`, from the segment of its line that holds it. */
async function historyBefore(store: Store<Item>, sessionId: string, turn: number): Promise<Item[]> {
  const overview = await describeSession(store, sessionId);
  const segments = [overview.head, ...overview.compacted].sort((a, b) =>
    a.segmentId < b.segmentId ? 1 : -1,
  );
  for (const info of segments) {
    const entries: Entry<Item>[] = [];
    for await (const batch of store.readFrom({ sessionId, segmentId: info.segmentId }, 0))
      entries.push(...batch);
    try {
      const keep = entriesThroughTurn(entries, turn, info.segmentId);
      return replay(entries.slice(0, keep)).history;
    } catch {
      // Not this segment's turn: an older one holds it.
    }
  }
  return [];
}

/** A run's totals from its turns. */
export function runOf(turns: readonly RecordedTurn[]): EvalRun {
  const sum = (pick: (t: RecordedTurn) => number) => turns.reduce((total, t) => total + pick(t), 0);
  const inputTokens = sum((t) => t.usage.inputTokens);
  const cacheReadTokens = sum((t) => t.usage.cacheReadTokens);
  return {
    turns,
    requests: sum((t) => t.usage.requests),
    inputTokens,
    outputTokens: sum((t) => t.usage.outputTokens),
    cacheReadTokens,
    cacheWriteTokens: sum((t) => t.usage.cacheWriteTokens),
    cacheShare: inputTokens === 0 ? 0 : cacheReadTokens / inputTokens,
  };
}

function totalsOf(run: EvalRun, price: ModelPrice | undefined): EvalRunTotals {
  return {
    requests: run.requests,
    inputTokens: run.inputTokens,
    outputTokens: run.outputTokens,
    cacheReadTokens: run.cacheReadTokens,
    cacheWriteTokens: run.cacheWriteTokens,
    cacheShare: run.cacheShare,
    cost: costOf(run, price),
    tools: toolsCalled(run),
  };
}
