/**
 * The `extension` domain of an eval item's origin (written by `@podkit/pod`'s `runEval`,
 * docs/evals.md): the first entry after the item session's `segment_start`. Additive within
 * format v3.
 */
export const EVAL_ORIGIN_DOMAIN = "eval.origin";
/** The `extension` domain of an eval item's scores: one entry per scorer, after its turns. */
export const EVAL_SCORE_DOMAIN = "eval.score";

/** Where an eval item came from, as the read model shows it. */
export interface EvalOriginSummary {
  /** The recorded session the item replays (null for an input case). */
  sourceSession: string | null;
  fromTurn: number | null;
  toTurn: number | null;
  evalId: string;
  /** What the variant changed: its manifest file, model, prompt pack and `--set` overlays. */
  variant: { manifest?: string; model?: string; pack?: string; set?: string[] };
}

/** One scorer's verdict on an eval item, with the recording's score (null without a recording). */
export interface EvalScoreSummary {
  name: string;
  score: number;
  pass: boolean;
  baselineScore: number | null;
  detail?: string;
}

/** What a segment records of an eval item: its origin (the first segment's) and its scores. */
export interface EvalSummary {
  origin?: EvalOriginSummary;
  scores: EvalScoreSummary[];
}

/** An `eval.origin` payload read back (untrusted): undefined unless it has an eval id. */
export function evalOriginOf(payload: unknown): EvalOriginSummary | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const p = payload as Record<string, unknown>;
  if (typeof p.eval_id !== "string") return undefined;
  const v = typeof p.variant === "object" && p.variant !== null ? (p.variant as Record<string, unknown>) : {};
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const set = Array.isArray(v.set) ? v.set.filter((s): s is string => typeof s === "string") : [];
  const variant: EvalOriginSummary["variant"] = {};
  for (const key of ["manifest", "model", "pack"] as const) {
    const value = text(v[key]);
    if (value !== undefined) variant[key] = value;
  }
  if (set.length > 0) variant.set = set;
  return {
    sourceSession: text(p.source_session) ?? null,
    fromTurn: turnOf(p.from_turn),
    toTurn: turnOf(p.to_turn),
    evalId: p.eval_id,
    variant,
  };
}

/** An `eval.score` payload read back (untrusted): undefined unless it has a name, a score and a verdict. */
export function evalScoreOf(payload: unknown): EvalScoreSummary | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const p = payload as Record<string, unknown>;
  if (typeof p.name !== "string" || typeof p.score !== "number" || typeof p.pass !== "boolean")
    return undefined;
  return {
    name: p.name,
    score: p.score,
    pass: p.pass,
    baselineScore: typeof p.baseline_score === "number" ? p.baseline_score : null,
    ...(typeof p.detail === "string" ? { detail: p.detail } : {}),
  };
}

function turnOf(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) ? value : null;
}
