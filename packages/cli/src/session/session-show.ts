import type { Item } from "@podkit/llm-worker";
import {
  CorruptEntryError,
  type DecisionSummary,
  type EvalOriginSummary,
  type EvalScoreSummary,
  type OutputSummary,
  readSessionView as readStoredSessionView,
  type SegmentInfo,
  type SessionOverview,
  type SessionView,
  type ShownSegment,
  type Store,
  type TurnSummary,
  type UsageTotals,
} from "@podkit/session-store";
import { approvalSubject } from "./approvals.js";
import { corruptLogError } from "./corrupt-log.js";
import { oneLine } from "./event-printer.js";

/**
 * What `podkit session show` prints (the read model's `readSessionView`, as serve's `GET /sessions/:id`), with
 * a corrupt line turned into the CLI's error that names it and the fork that continues before it.
 */
export async function readSessionView(store: Store<Item>, sessionId: string): Promise<SessionView> {
  try {
    return await readStoredSessionView(store, sessionId);
  } catch (error) {
    if (CorruptEntryError.isInstance(error)) throw await corruptLogError(error, store, sessionId);
    throw error;
  }
}

/** The text of `podkit session show`: segments, turns with their tool calls, usage, branches. */
export function sessionShowText(overview: SessionOverview, segments: readonly ShownSegment[]): string {
  const lines = [`session ${overview.sessionId}`];
  const total: UsageTotals = {
    requests: 0,
    inputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
  };
  for (const [index, segment] of segments.entries()) {
    const { info } = segment;
    const forkedAt = segments[index + 1]?.info.forkedFrom?.atTurn;
    const role =
      info.role === "head"
        ? "head segment"
        : info.role === "compacted"
          ? `compacted segment (→ ${info.compactedInto ?? "?"})`
          : `earlier segment (the next one forks it after turn ${forkedAt ?? "?"}; its later turns are another branch)`;
    lines.push("", `${role} ${segmentLine(info)}`);
    if (segment.eval?.origin !== undefined) lines.push(`  ${evalOriginLine(segment.eval.origin)}`);
    if (info.compactedFrom !== null) {
      lines.push(
        `  compaction: continues ${info.compactedFrom.segmentId} after turn ${info.compactedFrom.atTurn} with a summary`,
      );
    } else if (index === 0 && segment.carriedInputs.length > 0) {
      lines.push(`  carried over (${segment.carriedInputs.length} user input(s)):`);
      for (const text of segment.carriedInputs) lines.push(`    · "${oneLine(text, 70)}"`);
    }
    if (segment.turns.length === 0) lines.push("  no turns");
    for (const turn of segment.turns) {
      const label = turn.turn === null ? "  -" : `  ${turn.turn}`;
      const what = turn.input !== null ? `"${oneLine(turn.input, 70)}"` : `(${turn.trigger})`;
      lines.push(`${label}. ${what} → ${statusText(turn)}`);
      for (const approval of turn.approvals) lines.push(`       ${approvalLine(approval)}`);
      for (const decision of turn.decisions) lines.push(`       ${decisionLine(decision)}`);
      for (const tool of turn.tools)
        lines.push(`       ${tool.isError ? "✗" : "✓"} ${tool.name}: ${oneLine(tool.summary, 80)}`);
      if (turn.answer !== "") lines.push(`       answer: ${oneLine(turn.answer, 90)}`);
      if (turn.output !== undefined) lines.push(`       ${outputLine(turn.output)}`);
    }
    for (const decision of segment.decisions) lines.push(`  outside a turn: ${decisionLine(decision)}`);
    for (const score of segment.eval?.scores ?? []) lines.push(`  ${evalScoreLine(score)}`);
    for (const key of Object.keys(total) as (keyof UsageTotals)[]) total[key] += segment.usage[key];
  }
  for (const branch of overview.otherBranches) lines.push("", `other live branch ${segmentLine(branch)}`);
  lines.push(
    "",
    `usage: ${total.requests} request(s), ${total.inputTokens} input tokens (${total.cacheReadTokens} cache read, ${total.cacheWriteTokens} cache write), ${total.outputTokens} output tokens`,
  );
  return `${lines.join("\n")}\n`;
}

/**
 * `eval item of 01a2…e3 turns 1-2 (eval nightly; model anthropic/…, pack packs/terse.toml)`: where
 * an eval item came from (docs/evals.md); an input case has no source session.
 */
export function evalOriginLine(origin: EvalOriginSummary): string {
  const source =
    origin.sourceSession === null
      ? "eval item of an input case"
      : `eval item of ${origin.sourceSession} turns ${origin.fromTurn ?? "?"}-${origin.toTurn ?? "?"}`;
  const { manifest, model, pack, set } = origin.variant;
  const variant = [
    ...(manifest === undefined ? [] : [`manifest ${manifest}`]),
    ...(model === undefined ? [] : [`model ${model}`]),
    ...(pack === undefined ? [] : [`pack ${pack}`]),
    ...(set ?? []).map((overlay) => `--set ${overlay}`),
  ];
  return `${source} (eval ${origin.evalId}${variant.length === 0 ? "" : `; ${variant.join(", ")}`})`;
}

/** `✓ score answer 1.000 (baseline 1.000)` or `✗ score trajectory 0.500 (baseline 1.000): called [...]`. */
export function evalScoreLine(score: EvalScoreSummary): string {
  const baseline = score.baselineScore === null ? "" : ` (baseline ${score.baselineScore.toFixed(3)})`;
  const detail = score.detail === undefined || score.pass ? "" : `: ${oneLine(score.detail, 80)}`;
  return `${score.pass ? "✓" : "✗"} score ${score.name} ${score.score.toFixed(3)}${baseline}${detail}`;
}

/** How a turn ended, as one word or two: `finished`, `paused (interrupted)`, `error: <message>`. */
export function statusText(turn: Pick<TurnSummary, "status" | "interrupted" | "error">): string {
  if (turn.status === "errored") return `error: ${turn.error ?? "unknown"}`;
  return turn.interrupted ? `${turn.status} (interrupted)` : turn.status;
}

/** `? approval …: pending since …` or `✓/✗ approval …: allowed/denied by … at …`. */
function approvalLine(approval: ShownSegment["turns"][number]["approvals"][number]): string {
  const what = `approval of ${approval.tool}(${oneLine(approvalSubject(approval.arguments), 60)}) [${approval.callId}], asked by ${approval.askedBy}`;
  const asked = new Date(approval.requestedAt).toISOString();
  const answer = approval.answer;
  if (answer === undefined)
    return `${approval.pending ? "?" : "-"} ${what} at ${asked}: ${approval.pending ? "pending" : "closed without an answer"}`;
  const reason = answer.reason === undefined ? "" : ` (${oneLine(answer.reason, 60)})`;
  const verdict = answer.decision === "allow" ? "✓" : "✗";
  return `${verdict} ${what}: ${answer.decision === "allow" ? "allowed" : "denied"} by ${answer.by} at ${new Date(answer.at).toISOString()}${reason}`;
}

const DECISION_MARKS: Record<DecisionSummary["outcome"], string> = {
  allow: "✓",
  ask: "?",
  deny: "✗",
  pause: "‖",
  reject: "✗",
  feedback: "↺",
  stop: "■",
};

/** `✗ read_file [call_1] deny by scope (deny = ".env"): …`, one decision of the mode, a rule, containment, a hook or a guardrail. */
export function decisionLine(decision: DecisionSummary): string {
  const subject =
    decision.tool !== undefined
      ? `${decision.tool}${decision.callId === undefined ? "" : ` [${decision.callId}]`}`
      : `${decision.point === "final_answer" ? "final answer" : (decision.point ?? "run")}`;
  const where = decision.point !== undefined && decision.tool !== undefined ? ` ${decision.point}` : "";
  const rule = decision.rule === undefined ? "" : ` (${oneLine(decision.rule, 70)})`;
  const reason = decision.reason === undefined ? "" : `: ${oneLine(decision.reason, 80)}`;
  return `${DECISION_MARKS[decision.outcome]} ${subject}${where} ${decision.outcome} by ${decision.decidedBy}${rule}${reason}`;
}

/**
 * `output: {"verdict":"approve",…} (schema sha256:1a2b3c4d5e6f, unwrapped:output, 1 repair)`: a
 * turn's typed answer as one line of JSON (cut at 90 characters; `--json` has all of it).
 */
export function outputLine(output: OutputSummary): string {
  const json = JSON.stringify(output.value) ?? "null";
  const shown = json.length > 90 ? `${json.slice(0, 89)}…` : json;
  const notes = [
    `schema ${output.schemaDigest.slice(0, "sha256:".length + 12)}`,
    ...output.normalizations,
    ...(output.repairs === 0 ? [] : [`${output.repairs} repair${output.repairs === 1 ? "" : "s"}`]),
  ];
  return `output: ${shown} (${notes.join(", ")})`;
}

function segmentLine(info: SegmentInfo): string {
  const origin =
    info.forkedFrom !== null
      ? `, forked from ${info.forkedFrom.segmentId} at turn ${info.forkedFrom.atTurn}`
      : "";
  return `${info.segmentId} (${info.entryCount} entries, last written ${new Date(info.lastEntryAt).toISOString()}${origin})`;
}
