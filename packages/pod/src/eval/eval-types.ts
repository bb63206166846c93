import type { LoadedManifest } from "@podkit/manifest";
import {
  type SessionStatus,
  EVAL_ORIGIN_DOMAIN as STORED_EVAL_ORIGIN_DOMAIN,
  EVAL_SCORE_DOMAIN as STORED_EVAL_SCORE_DOMAIN,
  type Store,
} from "@podkit/session-store";
import type { OutputSchemaInput } from "../output/output-schema.js";
import type { LanguageModel, ModelOverride } from "../pod/model.js";
import type { PodOptions } from "../pod/pod-options.js";
import type { ToolOutputStub } from "./eval-tools.js";
import type { RecordedTurn } from "./recorded-turns.js";

/** A recorded session to replay: all its turns, or the turns `fromTurn`..`toTurn` (1-based, inclusive). */
export interface RecordedCase {
  readonly sessionId: string;
  readonly fromTurn?: number;
  readonly toTurn?: number;
  /** The expected answer of the case's last turn (else each turn's recorded answer is expected). */
  readonly expected?: unknown;
  readonly name?: string;
}

/** Inputs never recorded: one turn per input, scored against `expected` when given. */
export interface InputCase {
  readonly input: string | readonly string[];
  readonly expected?: unknown;
  readonly name?: string;
}

export type EvalCase = RecordedCase | InputCase;

/**
 * A query over the store's recorded sessions (docs/evals.md, "Cases by query"): the root sessions
 * that match every filter given, newest first, each replayed whole. Eval items and sub-pods'
 * sessions are never selected. Works on any store (files, PostgreSQL): it lists and reads
 * sessions through the `Store` interface.
 */
export interface EvalQuery {
  /** Sessions started at or after this time: a Date, an ISO date or date-time, or `<n>d`/`<n>h` back from now. */
  readonly since?: Date | string;
  /** Sessions started before this time (same forms as `since`). */
  readonly until?: Date | string;
  /** The session's status (its head's latest turn's, as `podkit session list` shows it); any of a list. */
  readonly status?: SessionStatus | readonly SessionStatus[];
  /** Sessions that called this tool (every one of a list). */
  readonly tool?: string | readonly string[];
  /** Sessions with a user input containing this text (case-insensitive). */
  readonly input?: string;
  /** The newest `limit` sessions that match. */
  readonly limit?: number;
}

/** The cases a query over the store selects: one recorded case per session it matches. */
export interface QueryCase {
  readonly where: EvalQuery;
}

/** USD per million tokens of one model: input not read from or written to the cache, output, cache reads and writes. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  /** Default: `input`. */
  readonly cacheRead?: number;
  /** Default: `input`. */
  readonly cacheWrite?: number;
}

/** Prices by model ref (`<provider>/<model id>`), for the report's cost. */
export type EvalPrices = Readonly<Record<string, ModelPrice>>;

/**
 * A judge scorer (docs/evals.md, "Judge scorers"): a model grades each item, and its recorded
 * baseline, against a rubric, answering through the typed-answer tool with `{score, reason}`.
 */
export interface EvalJudge {
  /** The scorer's name in reports and `eval.score` entries (default `judge`). */
  readonly name?: string;
  /**
   * The rubric: a `$podkit/…`, `$user/…` or `$workspace/…` prompt file (rendered as a template),
   * or the text itself. Default: the catalog's `eval_judge_rubric`.
   */
  readonly rubric?: string;
  /**
   * The judge's model: a ref (`<provider>/<model id>`, resolved as the pod resolves `[model]`:
   * the manifest's `base_url` and `api_key_env` apply when the provider is the manifest's), or a
   * LanguageModelV3. Default: the variant's model.
   */
  readonly model?: string | LanguageModel;
  /** The judge model's endpoint, replacing the manifest's `base_url`. */
  readonly baseUrl?: string;
  /** The least score that passes (default 0.5). */
  readonly threshold?: number;
}

/** How a tool is served to the variant: from the recording, for real in a scratch workspace, or fixed. */
export type ToolMode = "replay" | "live" | "stub";

/**
 * What changes against the recording: the manifest (with its overlays already applied), the
 * model (`PodOptions.model`: a LanguageModelV3 or a base URL), a prompt pack (the catalog's
 * manifest layer, `[pod].prompt_pack`). `label` is what the item's `eval.origin` records of it.
 */
export interface EvalVariant {
  readonly manifest: LoadedManifest;
  readonly model?: ModelOverride;
  /** A prompt pack file (absolute, or relative to the workspace) in place of `[pod].prompt_pack`. */
  readonly pack?: string;
  readonly label?: { readonly manifest?: string; readonly model?: string; readonly set?: readonly string[] };
}

/** One scorer's verdict on an item: `score` in 0..1, `pass` its own threshold. */
export interface EvalScore {
  readonly name: string;
  readonly score: number;
  readonly pass: boolean;
  readonly detail?: string;
  /** The scorer failed (it threw): the score is 0 and the item fails with this message. */
  readonly error?: string;
}

/** A divergence: the variant called a tool with arguments the recording never saw. */
export interface Divergence {
  /** The item's turn (1-based, within the case). */
  readonly turn: number;
  readonly tool: string;
  readonly arguments: string;
}

/** What a run of the case's turns produced (the variant's item, or the recorded baseline). */
export interface EvalRun {
  readonly turns: readonly RecordedTurn[];
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** `cacheReadTokens / inputTokens` (0 without input tokens). */
  readonly cacheShare: number;
}

/** What a scorer looks at: the variant's run, the baseline's (none for an input case), the case. */
export interface EvalItemView extends EvalRun {
  readonly case: EvalCase;
  readonly baseline: EvalRun | undefined;
  readonly divergences: readonly Divergence[];
  /** How the last run ended (`finished`, `limit_reached`, `awaiting_approval`, `errored`, …). */
  readonly stop: string;
}

/** A scorer: deterministic, given the item (with its baseline). */
export type Scorer = (item: EvalItemView) => EvalScore | Promise<EvalScore>;

/** Budgets the `budget` scorer checks (omitted: not scored). */
export interface EvalBudget {
  /** Model requests per item. */
  readonly maxRequests?: number;
  /** Input plus output tokens per item. */
  readonly maxTokens?: number;
}

/** The builtin deterministic scorers' settings. */
export interface EvalScoring {
  /** Tools that must never be called (the `trajectory` scorer fails an item that calls one). */
  readonly forbiddenTools?: readonly string[];
  readonly budget?: EvalBudget;
  /** The least cache-read share (0..1) the `cache_share` scorer passes (default: not scored, only reported). */
  readonly minCacheShare?: number;
  /** The typed answer's schema, checked by the `schema` scorer (and given to the pods as `PodOptions.output`). */
  readonly output?: OutputSchemaInput;
}

/** `runEval`'s inputs. */
export interface RunEvalOptions {
  /** Cases, and queries over the store that select recorded sessions (`{where}`). */
  readonly cases: readonly (EvalCase | QueryCase)[];
  /** Where the recorded sessions are, and where every item is written as a session. */
  readonly store: Store;
  readonly variant: EvalVariant;
  /** The mode of every tool not in `tools` (default `replay`). */
  readonly toolMode?: ToolMode;
  /** Per-tool modes. */
  readonly tools?: Readonly<Record<string, ToolMode>>;
  /** Results of `stub` tools, by tool name (default: a summary saying the tool was stubbed). */
  readonly stubs?: Readonly<Record<string, ToolOutputStub>>;
  readonly scoring?: EvalScoring;
  /** Custom scorers, run after the builtin ones. */
  readonly scorers?: readonly Scorer[];
  /** Judge scorers, run after the custom ones. */
  readonly judges?: readonly EvalJudge[];
  /** Prices by model ref: each item's and baseline's cost in the report (null for a model without one). */
  readonly prices?: EvalPrices;
  /** The model ref the recordings were made with, for the baseline's cost (default: the variant manifest's `[model] ref`). */
  readonly baselineModel?: string;
  /** The time `since`/`until` durations of a query count back from (default: now). */
  readonly now?: () => number;
  /** Names the eval: its directory, resumed when it exists (default: a new id). */
  readonly evalId?: string;
  /** Where eval directories live (default `<dataDir>/evals`, i.e. `<workspace>/.podkit/evals`). */
  readonly evalsDir?: string;
  /** Items run at once (default 2). */
  readonly concurrency?: number;
  /** A case regresses when its score falls more than this below its baseline's (default 0). */
  readonly tolerance?: number;
  /**
   * Options of every item's pod (environment, clock, warnings, packages…). `store`, `model`,
   * `toolPackages` and `output` are the eval's own.
   */
  readonly podOptions?: Omit<PodOptions, "store" | "model" | "output">;
  /** Called once the cases are known (queries run, every case checked), before the first item runs. */
  readonly onStart?: (total: number) => void;
  /** Called as each item finishes (or is found finished), for a progress display. */
  readonly onItem?: (result: EvalItemResult, done: number, total: number) => void;
  readonly signal?: AbortSignal;
}

/** One case's result: what `runEval` reports and writes to `<eval dir>/items/<key>.json`. */
export interface EvalItemResult {
  readonly key: string;
  readonly caseName: string;
  /** The item's own session (in the eval's store). */
  readonly sessionId: string;
  readonly sourceSessionId: string | null;
  readonly fromTurn: number | null;
  readonly toTurn: number | null;
  readonly score: number;
  readonly baselineScore: number | null;
  /** `score - baselineScore` (null without a baseline). */
  readonly difference: number | null;
  readonly scores: readonly (EvalScore & { readonly baseline: EvalScore | null })[];
  readonly divergences: readonly Divergence[];
  readonly stop: string;
  readonly error?: string;
  readonly item: EvalRunTotals;
  readonly baseline: EvalRunTotals | null;
  /** Passed: not regressed beyond the tolerance (an input case: every scorer passed), and no error. */
  readonly pass: boolean;
  /** True when this run found the item finished and did not redo it. */
  readonly resumed: boolean;
}

/** An `EvalRun`'s totals as reported. */
export interface EvalRunTotals {
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly cacheShare: number;
  /** USD, from `prices` (null without a price for the model). */
  readonly cost: number | null;
  readonly tools: readonly string[];
}

/** Sums of the items' (or the baselines') totals. */
export interface EvalTotals {
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly cacheShare: number;
  /** USD; null when an item's cost is unknown. */
  readonly cost: number | null;
}

/** `runEval`'s result. */
export interface EvalReport {
  readonly evalId: string;
  readonly dir: string;
  readonly items: readonly EvalItemResult[];
  readonly passed: number;
  readonly failed: number;
  readonly tolerance: number;
  /** The model refs priced: the variant's, and the recordings'. */
  readonly models: { readonly item: string; readonly baseline: string };
  /** Over every item, and over the baselines of the cases that have one (null: no case has). */
  readonly totals: { readonly item: EvalTotals; readonly baseline: EvalTotals | null };
}

/** The `eval.origin` entry's domain: the first entry after an item session's `segment_start`. */
export const EVAL_ORIGIN_DOMAIN: typeof STORED_EVAL_ORIGIN_DOMAIN = STORED_EVAL_ORIGIN_DOMAIN;
/** The `eval.score` entries' domain: one per scorer, after the item's turns. */
export const EVAL_SCORE_DOMAIN: typeof STORED_EVAL_SCORE_DOMAIN = STORED_EVAL_SCORE_DOMAIN;

/** The payload of an `eval.origin` entry. */
export interface EvalOrigin {
  readonly source_session: string | null;
  readonly from_turn: number | null;
  readonly to_turn: number | null;
  readonly variant: {
    readonly manifest?: string;
    readonly model?: string;
    readonly pack?: string;
    readonly set?: readonly string[];
  };
  readonly eval_id: string;
}
