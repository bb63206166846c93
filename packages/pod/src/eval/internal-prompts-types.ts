import type { Item, ModelAdapter } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { PodOptions } from "../pod/pod-options.js";
import type { EvalJudge, EvalOrigin, EvalScore, EvalVariant } from "./eval-types.js";

/**
 * Which internal prompt an internal eval replays: a compaction (`compact_system` and the prompts
 * it uses) or a memory extraction (`memory_extract_system`).
 */
export type InternalPromptKind = "compaction" | "memory_extract";

/** Every kind `runInternalEval` knows (the CLI's `--internal` values). */
export const INTERNAL_PROMPT_KINDS: readonly InternalPromptKind[] = ["compaction", "memory_extract"];

/** What a memory extraction of an item is given (see `MemoryExtractor`). */
export interface MemoryExtractJob {
  readonly store: Store<Item>;
  /** The item's session: a copy of the source segment's entries. */
  readonly sessionId: string;
  /** A scratch workspace, removed after the item: the extract's staging goes there. */
  readonly workspace: string;
  /** The variant's model. */
  readonly model: ModelAdapter;
  /** The variant's catalog (its pack applied): the changed `memory_extract_system`. */
  readonly prompts: PromptCatalog;
  /** `[worker].language` of the variant's manifest. */
  readonly language: string;
  readonly signal?: AbortSignal;
}

/**
 * Runs memory's extract on an item's session and resolves what it extracted (scored as JSON). The
 * pod does not depend on `@podkit/memory`: the caller passes it, e.g. `runMemoryExtract` with
 * `{sessions: job.store, ...job}` returning its staged decisions, discussions, attempts and requests.
 */
export type MemoryExtractor = (job: MemoryExtractJob) => Promise<unknown>;

/**
 * A recorded session to replay an internal prompt on. A compaction: `segmentId` names the segment
 * a recorded compaction wrote (its `compacted_from` is compacted again, and what it wrote is the
 * baseline); default: the most recent compaction on the session's line. A segment no compaction
 * wrote, or a session without one, is compacted from its history at its end, with no baseline.
 * A memory extraction: the entries of `segmentId` (default the head), with no baseline.
 */
export interface InternalCase {
  readonly sessionId: string;
  readonly segmentId?: string;
  /** Texts that must survive the compaction (with the run's own `checklist`). */
  readonly checklist?: readonly string[];
  readonly name?: string;
}

/** What survived one compaction (the item's, or the recorded baseline's). */
export interface CompactionOutcomeView {
  /** The text of the compacted history's first item: the summary in its `compacted_context_summary` frame. */
  readonly summary: string;
  /** Every text of the compacted history: summary, loaded files, references, the retained tail. */
  readonly survived: string;
  /** Estimated tokens of the compacted history (bytes / 4). */
  readonly tokens: number;
}

/**
 * What an internal scorer looks at. For a memory extraction, `summary` and `survived` are what it
 * extracted, as JSON.
 */
export interface InternalItemView extends CompactionOutcomeView {
  readonly kind: InternalPromptKind;
  readonly case: InternalCase;
  /** The case's checklist joined with the run's. */
  readonly checklist: readonly string[];
  /** The recorded compaction's outcome; undefined when the case replays none. */
  readonly baseline: CompactionOutcomeView | undefined;
}

/**
 * A scorer of an internal item, run on the item and on its baseline alike (a judge rubric plugs
 * in here: a function of the summary that asks a model).
 */
export type InternalScorer = (item: InternalItemView) => EvalScore | Promise<EvalScore>;

/** `runInternalEval`'s inputs. */
export interface RunInternalEvalOptions {
  readonly kind: InternalPromptKind;
  readonly cases: readonly InternalCase[];
  /** Where the recorded sessions are, and where every item is written as a session. */
  readonly store: Store;
  /** The manifest, model and prompt pack the compaction runs with (the pack holds the changed `compact_system`). */
  readonly variant: EvalVariant;
  /** Texts that must survive every case (the `checklist` scorer). */
  readonly checklist?: readonly string[];
  /** Scorers run after the checklist. */
  readonly scorers?: readonly InternalScorer[];
  /** Judges (`runEval`'s): a model grades the summary by a rubric, the recorded summary as the reference. */
  readonly judges?: readonly EvalJudge[];
  /** Memory's extract (required for `memory_extract`; see `MemoryExtractor`). */
  readonly extractor?: MemoryExtractor;
  readonly evalId?: string;
  /** Where eval directories live (default `<dataDir>/evals`). */
  readonly evalsDir?: string;
  /** Items run at once (default 2). */
  readonly concurrency?: number;
  /** An item regresses when its score falls more than this below its baseline's (default 0). */
  readonly tolerance?: number;
  /** Options of every item's pod (environment, clock, warnings, packages…). */
  readonly podOptions?: Omit<PodOptions, "store" | "model">;
  readonly onItem?: (result: InternalEvalItemResult, done: number, total: number) => void;
  readonly signal?: AbortSignal;
}

/** One internal item's result: what `runInternalEval` reports and writes to `<eval dir>/items/<key>.json`. */
export interface InternalEvalItemResult {
  readonly kind: InternalPromptKind;
  readonly key: string;
  readonly caseName: string;
  /** The item's own session (in the eval's store). */
  readonly sessionId: string;
  readonly sourceSessionId: string;
  /** The segment compacted again, or extracted from. */
  readonly sourceSegmentId: string;
  /** The segment the recorded compaction wrote (null: none, no baseline). */
  readonly baselineSegmentId: string | null;
  /** The source's turn count at the compaction. */
  readonly atTurn: number;
  readonly score: number;
  readonly baselineScore: number | null;
  /** `score - baselineScore` (null without a baseline). */
  readonly difference: number | null;
  readonly scores: readonly (EvalScore & { readonly baseline: EvalScore | null })[];
  /** `compacted` or `extracted`, or why not (`errored`, a skip reason). */
  readonly stop: string;
  readonly error?: string;
  /**
   * Estimated tokens (bytes / 4) of the history compacted (the entries extracted from), of the
   * item's compacted history (what it extracted), of the recorded compaction's.
   */
  readonly tokensBefore: number | null;
  readonly tokensAfter: number | null;
  readonly baselineTokensAfter: number | null;
  /** Not regressed beyond the tolerance (without a baseline: every scorer passed), and it ran. */
  readonly pass: boolean;
  /** True when this run found the item finished and did not redo it. */
  readonly resumed: boolean;
}

/** `runInternalEval`'s result. */
export interface InternalEvalReport {
  readonly kind: InternalPromptKind;
  readonly evalId: string;
  readonly dir: string;
  readonly items: readonly InternalEvalItemResult[];
  readonly passed: number;
  readonly failed: number;
  readonly tolerance: number;
}

/** An internal item's `eval.origin` payload: the eval's, plus what was compacted. */
export interface InternalEvalOrigin extends EvalOrigin {
  readonly internal: InternalPromptKind;
  readonly source_segment: string;
  readonly baseline_segment: string | null;
}
