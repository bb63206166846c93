import type { Tool, ToolContext, ToolOutput } from "@podkit/llm-worker";
import { PodUsageError } from "../errors.js";
import { normalizeAnswer, type OutputNormalization } from "./normalize.js";
import type { OutputIssue, OutputSchema } from "./output-schema.js";

/** A tool name every provider accepts (Anthropic, OpenAI and Gemini share this rule). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A `final_answer` call checked: the answer (after any normalisation), or what is wrong with it. */
export type FinalAnswerCheck<T> =
  | { ok: true; value: T; normalizations: OutputNormalization[] }
  | { ok: false; raw: unknown; issues: OutputIssue[] };

/** What `finalAnswerTool` needs: the catalog's name and description, the schema, and what a call does. */
export interface FinalAnswerToolOptions<T> {
  /** The catalog's `output_tool_name`, rendered. */
  name: string;
  /** The catalog's `output_tool_description`, rendered. */
  description: string;
  schema: OutputSchema<T>;
  /** What the model gets back for a checked call: an acceptance, or the `output_repair` error result. */
  execute(check: FinalAnswerCheck<T>, ctx: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/**
 * The tool strategy's `final_answer` tool: its input schema is the output schema itself (whose root
 * is an object, as a tool's input must be), so the answer is the call's arguments. It changes
 * nothing outside the conversation (`readOnly`), so a `read_only` pod may answer too. The pod puts
 * it on the tool list from the first request of a session and never takes it off: the tool list
 * is part of the cached prefix (docs/output.md).
 *
 * `execute` gets every call checked by `checkFinalAnswerArguments`. Note that the worker checks a
 * tool's arguments against its input schema before `execute` runs, so an answer the normalisations
 * would repair reaches `execute` only if the pod takes the call before that check
 * (`checkFinalAnswer` on the call's argument text does the same work there).
 */
export function finalAnswerTool<T>(options: FinalAnswerToolOptions<T>): Tool {
  const name = options.name.trim();
  if (!TOOL_NAME.test(name)) {
    throw new PodUsageError(
      `the output tool name "${options.name}" is not a tool name providers accept (letters, digits, _ and -, at most 64)`,
      { hint: "fix output_tool_name in your prompt pack (podkit prompt catalog --explain output_tool_name)" },
    );
  }
  return {
    name,
    description: options.description,
    inputSchema: options.schema.jsonSchema as unknown as Tool["inputSchema"],
    readOnly: true,
    execute: (args, ctx) => options.execute(checkFinalAnswerArguments(args, options.schema), ctx),
  };
}

/**
 * Checks the text of a `final_answer` call's arguments as the provider sent it: JSON that does not
 * parse is an issue at the root (the model is told so), anything else goes through
 * `checkFinalAnswerArguments`.
 */
export function checkFinalAnswer<T>(argumentsText: string, schema: OutputSchema<T>): FinalAnswerCheck<T> {
  let args: unknown;
  try {
    args = argumentsText.trim() === "" ? {} : JSON.parse(argumentsText);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      raw: argumentsText,
      issues: [{ path: "", message: `the arguments are not valid JSON (${reason}); send a JSON object` }],
    };
  }
  return checkFinalAnswerArguments(args, schema);
}

/** Checks parsed `final_answer` arguments, with the normalisations of `normalizeAnswer`. */
export function checkFinalAnswerArguments<T>(args: unknown, schema: OutputSchema<T>): FinalAnswerCheck<T> {
  const answer = normalizeAnswer(args, schema);
  return answer.result.ok
    ? { ok: true, value: answer.result.value, normalizations: answer.normalizations }
    : { ok: false, raw: args, issues: answer.result.issues };
}
