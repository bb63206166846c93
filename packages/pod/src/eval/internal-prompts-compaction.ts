import { type Item, messageText } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import {
  describeSession,
  type Entry,
  lineOf,
  NotFoundError,
  replay,
  type SegmentInfo,
  SessionLog,
  type SessionState,
  type Store,
} from "@podkit/session-store";
import { Pod } from "../pod/pod.js";
import { PRUNE_DOMAIN } from "../pod/pod-compaction.js";
import type { PodOptions } from "../pod/pod-options.js";
import { EvalCaseError } from "./errors.js";
import { EVAL_ORIGIN_DOMAIN, EVAL_SCORE_DOMAIN } from "./eval-types.js";
import { scoreOutcome } from "./internal-prompts-scorers.js";
import type {
  CompactionOutcomeView,
  InternalCase,
  InternalEvalItemResult,
  InternalEvalOrigin,
  InternalItemView,
  InternalScorer,
} from "./internal-prompts-types.js";

/** A recorded compaction made ready to replay: the history it compacted and what it wrote. */
export interface PreparedCompaction {
  readonly key: string;
  readonly name: string;
  readonly case: InternalCase;
  readonly checklist: readonly string[];
  readonly sourceSegmentId: string;
  /** The compacted segment's state at its end: what the compaction is given. */
  readonly source: SessionState<Item>;
  /** The segment the recorded compaction wrote, and what survived in it (undefined: none recorded). */
  readonly baselineSegmentId: string | null;
  readonly baseline: CompactionOutcomeView | undefined;
  /** The turn count at the recorded compaction (else at the source's end). */
  readonly atTurn: number;
  /** Estimated tokens of the source's history (bytes / 4, as `CompactionOutcomeView.tokens`). */
  readonly tokensBefore: number;
}

/** What every item of one internal eval shares (a memory extract item adds its own). */
export interface InternalItemContext {
  readonly evalId: string;
  readonly store: Store<Item>;
  /** The variant's manifest, pack applied. */
  readonly manifest: LoadedManifest;
  readonly podOptions: PodOptions;
  readonly scorers: readonly InternalScorer[];
  readonly origin: InternalEvalOrigin["variant"];
  readonly tolerance: number;
  readonly signal?: AbortSignal;
}

/** The overview of a case's session; a session the store does not have is the case's `EvalCaseError`. */
export async function caseSession(
  store: Store<Item>,
  sessionId: string,
  caseName: string,
): Promise<Awaited<ReturnType<typeof describeSession>>> {
  try {
    return await describeSession(store, sessionId);
  } catch (error) {
    if (NotFoundError.isInstance(error))
      throw new EvalCaseError(caseName, "no such session in the store", { cause: error });
    throw error;
  }
}

/**
 * Finds the compaction a case replays: the segment it names (one a compaction wrote: its
 * `compacted_from` is the source, what it wrote the baseline; any other: compacted from its end),
 * else the most recent compaction on the session's line, else the head at its end.
 */
export async function prepareCompaction(
  store: Store<Item>,
  evalCase: InternalCase,
  identity: { key: string; name: string; checklist: readonly string[] },
): Promise<PreparedCompaction> {
  const overview = await caseSession(store, evalCase.sessionId, identity.name);
  const segments = new Map<string, SegmentInfo>(
    [overview.head, ...overview.otherBranches, ...overview.compacted].map((info) => [info.segmentId, info]),
  );
  let written: SegmentInfo | undefined;
  let sourceId: string;
  if (evalCase.segmentId !== undefined) {
    const named = segments.get(evalCase.segmentId);
    if (named === undefined) {
      throw new EvalCaseError(
        identity.name,
        `segment ${evalCase.segmentId} is not a segment of the session`,
        {
          hint: `\`podkit session show ${evalCase.sessionId}\` lists its segments`,
        },
      );
    }
    written = named.compactedFrom === null ? undefined : named;
    sourceId = named.compactedFrom?.segmentId ?? named.segmentId;
  } else {
    written = lineOf(overview)
      .map((id) => segments.get(id))
      .findLast((info) => info?.compactedFrom != null);
    sourceId = written?.compactedFrom?.segmentId ?? overview.head.segmentId;
  }
  const source = replay(await readSegment(store, evalCase.sessionId, sourceId));
  let baseline: CompactionOutcomeView | undefined;
  if (written !== undefined) {
    const start = (await readSegment(store, evalCase.sessionId, written.segmentId, 1))[0];
    baseline = outcomeOf(start?.kind === "segment_start" ? (start.history as Item[]) : []);
  }
  return {
    ...identity,
    case: evalCase,
    sourceSegmentId: sourceId,
    source,
    baselineSegmentId: written?.segmentId ?? null,
    baseline,
    atTurn: written?.compactedFrom?.atTurn ?? source.turn,
    tokensBefore: tokensOf(source.history),
  };
}

/**
 * Replays one compaction as its own session: a new session holding the source segment's history
 * (its system prompt, config, history sources and prune boundary, so the compaction request is
 * the recording's), the `eval.origin` entry, then `pod.compact()` by a pod built from the
 * variant (its catalog: the changed `compact_system`) into a new segment, whose history is scored
 * and gets the `eval.score` entries.
 */
export async function runCompactionItem(
  prepared: PreparedCompaction,
  context: InternalItemContext,
): Promise<InternalEvalItemResult> {
  const { source } = prepared;
  const { store } = context;
  const origin: InternalEvalOrigin = {
    source_session: prepared.case.sessionId,
    // The history compacted holds the source's turns 1 to `atTurn` (earlier ones in a summary).
    from_turn: 1,
    to_turn: prepared.atTurn,
    variant: context.origin,
    eval_id: context.evalId,
    internal: "compaction",
    source_segment: prepared.sourceSegmentId,
    baseline_segment: prepared.baselineSegmentId,
  };
  const log = await SessionLog.create(store, {
    systemPrompt: source.systemPrompt,
    config: source.config,
    history: source.history,
    historySources: source.historySources,
  });
  await log.append({ kind: "extension", domain: EVAL_ORIGIN_DOMAIN, payload: origin });
  const prune = source.extensions.get(PRUNE_DOMAIN);
  if (prune !== undefined) await log.append({ kind: "extension", domain: PRUNE_DOMAIN, payload: prune });
  // The split point and the cache breakpoint come from the last measured request: the recording's.
  const usage = source.usage.at(-1);
  if (usage !== undefined) {
    await log.append({
      kind: "llm_usage",
      history_len: usage.historyLen,
      input_tokens: usage.inputTokens,
      cache_read_tokens: usage.cacheReadTokens,
      cache_write_tokens: usage.cacheWriteTokens,
      output_tokens: usage.outputTokens,
    });
  }

  const base = {
    kind: "compaction" as const,
    key: prepared.key,
    caseName: prepared.name,
    sessionId: log.sessionId,
    sourceSessionId: prepared.case.sessionId,
    sourceSegmentId: prepared.sourceSegmentId,
    atTurn: prepared.atTurn,
    resumed: false,
    baselineSegmentId: prepared.baselineSegmentId,
    baselineTokensAfter: prepared.baseline?.tokens ?? null,
  };
  const pod = await Pod.restore(context.manifest, log.sessionId, context.podOptions);
  try {
    let outcome: Awaited<ReturnType<Pod["compact"]>>;
    try {
      outcome = await pod.compact(context.signal === undefined ? {} : { signal: context.signal });
    } catch (failure) {
      context.signal?.throwIfAborted();
      const error = failure instanceof Error ? failure.message : String(failure);
      return {
        ...base,
        score: 0,
        baselineScore: null,
        difference: null,
        scores: [],
        stop: "errored",
        error,
        pass: false,
        tokensBefore: prepared.tokensBefore,
        tokensAfter: null,
      };
    }
    const after = outcomeOf(pod.history);
    const view: InternalItemView = {
      ...after,
      kind: "compaction",
      case: prepared.case,
      checklist: prepared.checklist,
      baseline: prepared.baseline,
    };
    const scored = await scoreOutcome(context, view, (payload) =>
      pod.appendExtension(EVAL_SCORE_DOMAIN, payload),
    );
    return {
      ...base,
      ...scored,
      stop: outcome.status === "compacted" ? "compacted" : outcome.reason,
      pass: scored.pass && outcome.status === "compacted",
      tokensBefore: prepared.tokensBefore,
      tokensAfter: outcome.status === "compacted" ? after.tokens : null,
    };
  } finally {
    await pod.close();
  }
}

/** The summary, every text and the size of a compacted history. */
function outcomeOf(history: readonly Item[]): CompactionOutcomeView {
  const texts = history.map(itemText);
  const survived = texts.join("\n");
  return {
    summary: texts[0] ?? "",
    survived,
    tokens: tokensOf(history),
  };
}

const tokensOf = (history: readonly Item[]) => Math.ceil(Buffer.byteLength(JSON.stringify(history)) / 4);

function itemText(item: Item): string {
  switch (item.type) {
    case "message":
      return messageText(item);
    case "tool_call":
    case "provider_tool_call":
      return `${item.name} ${item.arguments}`;
    case "tool_result":
      return item.content === undefined ? item.summary : `${item.summary}\n${item.content}`;
    case "compaction":
      return item.text;
    default:
      return "";
  }
}

async function readSegment(
  store: Store<Item>,
  sessionId: string,
  segmentId: string,
  limit = Number.POSITIVE_INFINITY,
): Promise<Entry<Item>[]> {
  const entries: Entry<Item>[] = [];
  for await (const batch of store.readFrom({ sessionId, segmentId }, 0)) {
    entries.push(...batch);
    if (entries.length >= limit) break;
  }
  return entries;
}
