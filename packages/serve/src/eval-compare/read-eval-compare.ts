import type { Item } from "@podkit/llm-worker";
import { EVAL_ORIGIN_DOMAIN, EVAL_SCORE_DOMAIN, type RecordedTurn, readRecordedTurns } from "@podkit/pod";
import { CorruptEntryError, describeSession, lineOf, NotFoundError, type Store } from "@podkit/session-store";
import { z } from "zod";
import { HttpError } from "../http/http-error.js";
import { isSessionId } from "../http/session-id.js";
import { answerDiff, type DiffPart } from "./answer-diff.js";
import { type CallChange, type ComparedCall, canonicalArguments, toolCallDiff } from "./tool-call-diff.js";

/** One side of a compared turn: what its input was, which tools it called, what it answered. */
export interface ComparedTurnSide {
  readonly turn: number;
  readonly input: string | null;
  /** The typed answer as indented JSON when the turn gave one, else the answer's text. */
  readonly answer: string;
  readonly toolCalls: readonly ComparedCall[];
  readonly status: string;
}

/** The n-th turn of the case: the original's and the item's, and how they differ. */
export interface ComparedTurn {
  readonly position: number;
  readonly original: ComparedTurnSide | null;
  readonly item: ComparedTurnSide | null;
  /** Null when one side has no such turn. */
  readonly answerDiff: readonly DiffPart[] | null;
  readonly toolCalls: readonly CallChange[];
}

/** What `GET /sessions/:id/eval-compare` answers (docs/serve.md). */
export interface EvalCompare {
  readonly sessionId: string;
  readonly origin: {
    readonly evalId: string;
    readonly sourceSession: string | null;
    readonly fromTurn: number | null;
    readonly toTurn: number | null;
    /** What the variant changed, as `key: value` text (`manifest`, `model`, `pack`, `set`, …). */
    readonly variant: Readonly<Record<string, string>>;
  };
  /** The recorded session beside the item; `problem` says why it cannot be shown, when it cannot. */
  readonly source: { readonly sessionId: string | null; readonly problem: string | null };
  readonly turns: readonly ComparedTurn[];
  readonly scores: readonly {
    readonly name: string;
    readonly score: number;
    readonly pass: boolean;
    readonly baselineScore: number | null;
    readonly detail: string | null;
  }[];
}

/** The longest tool-result summary shown; the rest is in the sessions themselves. */
const RESULT_CHARS = 2_000;

// What the log says is untrusted: each payload is checked before anything reads it.
const OriginSchema = z.object({
  source_session: z.string().nullable(),
  from_turn: z.number().int().nullable(),
  to_turn: z.number().int().nullable(),
  variant: z.record(z.string(), z.unknown()),
  eval_id: z.string(),
});

const ScoreSchema = z.object({
  name: z.string(),
  score: z.number(),
  pass: z.boolean(),
  detail: z.string().optional(),
  baseline_score: z.number().nullable().optional(),
});

/**
 * An eval item beside the session it replayed (docs/evals.md): the item's `eval.origin` and
 * `eval.score` entries, then turn by turn the original's turns of the replayed range and the
 * item's, with a word diff of the answers and a diff of the tool calls. Throws `NotFoundError`
 * for an unknown session and a 404 `HttpError` for a session that is not an eval item (422 when
 * its `eval.origin` is malformed). A source session that is missing, not a session id, or
 * unreadable is no error: the item's side is shown and `source.problem` says why the other is not.
 */
export async function readEvalCompare(store: Store<Item>, sessionId: string): Promise<EvalCompare> {
  const { origin, scores } = await readItemEntries(store, sessionId);
  const itemTurns = await readRecordedTurns(store, sessionId);
  const source = await readSource(store, origin);
  const from = origin.from_turn ?? 1;
  const originalTurns = (source.turns ?? []).filter(
    (turn) => turn.turn >= from && (origin.to_turn === null || turn.turn <= origin.to_turn),
  );
  const count = Math.max(itemTurns.length, source.turns === undefined ? 0 : originalTurns.length);
  const turns: ComparedTurn[] = [];
  for (let index = 0; index < count; index++) {
    const original = source.turns === undefined ? undefined : originalTurns[index];
    const item = itemTurns[index];
    const originalSide = original === undefined ? null : sideOf(original);
    const itemSide = item === undefined ? null : sideOf(item);
    turns.push({
      position: index + 1,
      original: originalSide,
      item: itemSide,
      answerDiff:
        originalSide === null || itemSide === null
          ? null
          : await answerDiff(originalSide.answer, itemSide.answer),
      toolCalls: toolCallDiff(originalSide?.toolCalls ?? [], itemSide?.toolCalls ?? []),
    });
  }
  return {
    sessionId,
    origin: {
      evalId: origin.eval_id,
      sourceSession: origin.source_session,
      fromTurn: origin.from_turn,
      toTurn: origin.to_turn,
      variant: variantText(origin.variant),
    },
    source: { sessionId: source.sessionId, problem: source.problem },
    turns,
    scores,
  };
}

/** The item's `eval.origin` (its first) and its `eval.score` entries, over its line of segments. */
async function readItemEntries(store: Store<Item>, sessionId: string) {
  const overview = await describeSession(store, sessionId);
  let origin: unknown;
  const scores: EvalCompare["scores"][number][] = [];
  for (const segmentId of lineOf(overview)) {
    for await (const entry of store.readAll({ sessionId, segmentId })) {
      if (entry.kind !== "extension") continue;
      if (entry.domain === EVAL_ORIGIN_DOMAIN && origin === undefined) origin = entry.payload;
      if (entry.domain !== EVAL_SCORE_DOMAIN) continue;
      const score = ScoreSchema.safeParse(entry.payload);
      if (!score.success) continue;
      const { name, pass, detail, baseline_score } = score.data;
      scores.push({
        name,
        score: score.data.score,
        pass,
        baselineScore: baseline_score ?? null,
        detail: detail ?? null,
      });
    }
  }
  if (origin === undefined) {
    throw new HttpError(
      404,
      `session ${sessionId} is not an eval item: its log has no eval.origin entry`,
      "`podkit eval` writes each item as a session that starts with one (docs/evals.md)",
    );
  }
  const parsed = OriginSchema.safeParse(origin);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HttpError(
      422,
      `session ${sessionId}'s eval.origin entry is malformed (${issue?.path.join(".") || "payload"}: ${issue?.message ?? "invalid"})`,
      "the item cannot be compared with its original; its own log is still shown on its page",
    );
  }
  return { origin: parsed.data, scores };
}

/** The source session's turns, or why they cannot be had (never an exception: the item is still shown). */
async function readSource(
  store: Store<Item>,
  origin: z.infer<typeof OriginSchema>,
): Promise<{ sessionId: string | null; problem: string | null; turns?: RecordedTurn[] }> {
  const id = origin.source_session;
  if (id === null) {
    return {
      sessionId: null,
      problem:
        "This item replayed inputs from a dataset, not a recorded session: there is no original to show.",
    };
  }
  if (!isSessionId(id)) {
    return {
      sessionId: null,
      problem: `The item's eval.origin names a source session that is not a session id (${JSON.stringify(id.slice(0, 80))}).`,
    };
  }
  try {
    return { sessionId: id, problem: null, turns: await readRecordedTurns(store, id) };
  } catch (error) {
    if (NotFoundError.isInstance(error)) {
      return {
        sessionId: id,
        problem: `The original session ${id} is not in this server's store (deleted, or recorded in another store).`,
      };
    }
    const why = CorruptEntryError.isInstance(error)
      ? `line ${error.line} is corrupt: ${error.reason}`
      : error instanceof Error
        ? error.message
        : String(error);
    return { sessionId: id, problem: `The original session ${id} cannot be read: ${why}` };
  }
}

function sideOf(turn: RecordedTurn): ComparedTurnSide {
  return {
    turn: turn.turn,
    input: turn.input,
    answer: turn.output === undefined ? turn.answer : JSON.stringify(turn.output, null, 2),
    toolCalls: turn.toolCalls.map((call) => ({
      name: call.name,
      arguments: canonicalArguments(call.arguments),
      result: call.result === undefined ? null : shortened(call.result.summary),
      isError: call.result?.is_error === true,
    })),
    status: turn.status,
  };
}

function shortened(text: string): string {
  return text.length <= RESULT_CHARS ? text : `${text.slice(0, RESULT_CHARS)}…`;
}

/** The variant's fields as text: strings as they are, lists joined, anything else as JSON. */
function variantText(variant: Record<string, unknown>): Record<string, string> {
  // Built from entries (never by assignment): a key such as `__proto__` stays a plain key.
  return Object.fromEntries(
    Object.entries(variant)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [
        key,
        typeof value === "string"
          ? value
          : Array.isArray(value) && value.every((v) => typeof v === "string")
            ? value.join(" ")
            : JSON.stringify(value),
      ]),
  );
}
