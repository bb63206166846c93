import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { type Entry, type EntryInput, replay, SessionLog, type Store } from "@podkit/session-store";
import { canonicalJson } from "../context/context-key.js";
import { EvalCaseError } from "./errors.js";
import { EVAL_ORIGIN_DOMAIN, EVAL_SCORE_DOMAIN } from "./eval-types.js";
import type { InternalItemContext } from "./internal-prompts-compaction.js";
import { caseSession } from "./internal-prompts-compaction.js";
import { scoreOutcome } from "./internal-prompts-scorers.js";
import type {
  InternalCase,
  InternalEvalItemResult,
  InternalEvalOrigin,
  InternalItemView,
  MemoryExtractor,
} from "./internal-prompts-types.js";

/** The `extension` domain of memory's extract pointer (`@podkit/memory`): not copied into an item. */
const EXTRACT_POINTER_DOMAIN = "memory.extract";

/** A recorded segment made ready for a memory extraction. */
export interface PreparedExtract {
  readonly key: string;
  readonly name: string;
  readonly case: InternalCase;
  readonly checklist: readonly string[];
  readonly sourceSegmentId: string;
  /** The segment's entries after its `segment_start`: what the extract reads. */
  readonly entries: readonly Entry<Item>[];
  readonly systemPrompt: string | null;
  readonly config: Record<string, unknown>;
  readonly atTurn: number;
  readonly tokensBefore: number;
}

/** What a memory extract item needs besides the shared context: memory's extract and the variant's prompts. */
export interface ExtractItemContext extends InternalItemContext {
  readonly extractor: MemoryExtractor;
  readonly prompts: Parameters<MemoryExtractor>[0]["prompts"];
  readonly model: Parameters<MemoryExtractor>[0]["model"];
  readonly language: string;
}

/** Reads the segment a case extracts: the one it names, else the session's head. */
export async function prepareExtract(
  store: Store<Item>,
  evalCase: InternalCase,
  identity: { key: string; name: string; checklist: readonly string[] },
): Promise<PreparedExtract> {
  const overview = await caseSession(store, evalCase.sessionId, identity.name);
  const known = [overview.head, ...overview.otherBranches, ...overview.compacted].map((s) => s.segmentId);
  const segmentId = evalCase.segmentId ?? overview.head.segmentId;
  if (!known.includes(segmentId)) {
    throw new EvalCaseError(identity.name, `segment ${segmentId} is not a segment of the session`, {
      hint: `\`podkit session show ${evalCase.sessionId}\` lists its segments`,
    });
  }
  const entries: Entry<Item>[] = [];
  for await (const batch of store.readFrom({ sessionId: evalCase.sessionId, segmentId }, 0))
    entries.push(...batch);
  if (!entries.some((entry) => entry.kind === "user_input")) {
    throw new EvalCaseError(identity.name, `segment ${segmentId} holds no user input to extract from`);
  }
  const state = replay(entries);
  const copied = entries.slice(1).filter((entry) => !skipped(entry));
  return {
    ...identity,
    case: evalCase,
    sourceSegmentId: segmentId,
    entries: copied,
    systemPrompt: state.systemPrompt,
    config: state.config,
    atTurn: state.turn,
    tokensBefore: Math.ceil(Buffer.byteLength(JSON.stringify(copied)) / 4),
  };
}

/**
 * Replays one memory extraction as its own session: a new session holding a copy of the source
 * segment's entries (after the `eval.origin` entry), memory's extract run on it by `extractor`
 * with the variant's catalog (its `memory_extract_system`) and a scratch workspace (the staging it
 * writes goes there, not into the project's memory), then what it extracted is scored and the
 * `eval.score` entries appended. Nothing is recorded of an extraction: there is no baseline.
 */
export async function runExtractItem(
  prepared: PreparedExtract,
  context: ExtractItemContext,
): Promise<InternalEvalItemResult> {
  const { store } = context;
  const origin: InternalEvalOrigin = {
    source_session: prepared.case.sessionId,
    from_turn: 1,
    to_turn: prepared.atTurn,
    variant: context.origin,
    eval_id: context.evalId,
    internal: "memory_extract",
    source_segment: prepared.sourceSegmentId,
    baseline_segment: null,
  };
  const log = await SessionLog.create(store, {
    systemPrompt: prepared.systemPrompt,
    config: prepared.config,
  });
  await log.append({ kind: "extension", domain: EVAL_ORIGIN_DOMAIN, payload: origin });
  if (prepared.entries.length > 0) await log.appendMany(prepared.entries as EntryInput<Item>[]);
  const base = {
    kind: "memory_extract" as const,
    key: prepared.key,
    caseName: prepared.name,
    sessionId: log.sessionId,
    sourceSessionId: prepared.case.sessionId,
    sourceSegmentId: prepared.sourceSegmentId,
    baselineSegmentId: null,
    atTurn: prepared.atTurn,
    tokensBefore: prepared.tokensBefore,
    baselineTokensAfter: null,
    resumed: false,
  };
  const scratch = await mkdtemp(join(tmpdir(), "podkit-eval-extract-"));
  try {
    let extracted: unknown;
    try {
      extracted = await context.extractor({
        store,
        sessionId: log.sessionId,
        workspace: scratch,
        model: context.model,
        prompts: context.prompts,
        language: context.language,
        ...(context.signal === undefined ? {} : { signal: context.signal }),
      });
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
        tokensAfter: null,
      };
    }
    const text = canonicalJson(extracted ?? null);
    const tokens = Math.ceil(Buffer.byteLength(text) / 4);
    const view: InternalItemView = {
      kind: "memory_extract",
      case: prepared.case,
      checklist: prepared.checklist,
      summary: text,
      survived: text,
      tokens,
      baseline: undefined,
    };
    // The extract appended its pointer to the item session: continue from what is there now.
    const head = await SessionLog.open(store, log.sessionId);
    const scored = await scoreOutcome(context, view, async (payload) => {
      await head.append({ kind: "extension", domain: EVAL_SCORE_DOMAIN, payload });
    });
    return { ...base, ...scored, stop: "extracted", tokensAfter: tokens };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Bookkeeping that is not the session's work: memory's pointer, an eval's own entries. */
function skipped(entry: Entry<Item>): boolean {
  return (
    entry.kind === "extension" &&
    (entry.domain === EXTRACT_POINTER_DOMAIN || entry.domain.startsWith("eval."))
  );
}
