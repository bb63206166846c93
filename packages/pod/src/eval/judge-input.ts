import type { EvalJudgeInputContext } from "../catalog/pod-prompt.js";
import { canonicalJson } from "../context/context-key.js";
import type { EvalItemView } from "./eval-types.js";
import type { RecordedTurn } from "./recorded-turns.js";

/** A tool result is shown to the judge up to this many characters. */
const RESULT_CHARS = 2000;

/**
 * What `eval_judge_input` is rendered with for one item (or its baseline): its turns with their
 * tool calls and answers, the recording's answers, and the case's expected answer. Built from the
 * item's data alone, in a fixed order, so the same item always gives the judge the same bytes.
 */
export function judgeInputContext(item: EvalItemView): EvalJudgeInputContext {
  const expected = "expected" in item.case ? item.case.expected : undefined;
  return {
    turns: item.turns.map((turn, index) => ({
      turn: index + 1,
      input: turn.input ?? "",
      answer: turn.answer.trim(),
      output: turn.output === undefined ? "" : canonicalJson(turn.output),
      tools: turn.toolCalls.map((call) => ({
        name: call.name,
        arguments: call.arguments,
        result: resultText(call.result),
        is_error: call.result?.is_error === true,
      })),
    })),
    reference: (item.baseline?.turns ?? []).map((turn, index) => ({
      turn: index + 1,
      answer: answerText(turn),
    })),
    expected: expected === undefined ? "" : typeof expected === "string" ? expected : canonicalJson(expected),
  };
}

function answerText(turn: RecordedTurn): string {
  return turn.output === undefined ? turn.answer.trim() : canonicalJson(turn.output);
}

function resultText(result: RecordedTurn["toolCalls"][number]["result"]): string {
  if (result === undefined) return "";
  const text = result.content === undefined ? result.summary : `${result.summary}\n${result.content}`;
  return text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)} […]` : text;
}
