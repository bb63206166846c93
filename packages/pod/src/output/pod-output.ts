import type {
  AfterToolBatchDecision,
  Item,
  Tool,
  ToolOutput,
  TurnEndContext,
  TurnEndDecision,
  WorkerEvent,
} from "@podkit/llm-worker";
import { CancelledError } from "@podkit/llm-worker";
import { FINAL_OUTPUT_DOMAIN as STORED_FINAL_OUTPUT_DOMAIN } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { PodEvent } from "../pod/events.js";
import { OutputValidationError } from "./errors.js";
import { checkFinalAnswerArguments, type FinalAnswerCheck, finalAnswerTool } from "./final-answer-tool.js";
import { normalizeAnswer, type OutputNormalization } from "./normalize.js";
import type { OutputIssue, OutputSchema } from "./output-schema.js";
import { PartialOutputTracker } from "./partial.js";

/**
 * The `extension` domain of the entry a typed answer is recorded in (docs/output.md): the value,
 * the schema's digest, the call that gave it, the normalisations applied and the repairs made.
 * Additive within log format v3.
 */
export const FINAL_OUTPUT_DOMAIN: typeof STORED_FINAL_OUTPUT_DOMAIN = STORED_FINAL_OUTPUT_DOMAIN;

/** The payload of a `final_output` entry (snake_case, like every log field). */
export interface FinalOutputPayload {
  readonly value: unknown;
  readonly schema_digest: string;
  /** The `final_answer` call that gave it; absent when the model answered in text (parsed). */
  readonly call_id?: string;
  readonly normalizations: readonly string[];
  /** The error results the model got before it, in order: which call (if any) and what was wrong. */
  readonly repairs: readonly { readonly call_id?: string; readonly issues: readonly OutputIssue[] }[];
}

/** What the pod needs to hand the output its items and its log. */
export interface PodOutputOptions<T> {
  readonly schema: OutputSchema<T>;
  readonly maxRepairs: number;
  readonly catalog: PromptCatalog;
  /** `[worker] max_turns`: the last request gets the note that forces an answer. */
  readonly maxRequests: number;
  /** Appends the `final_output` entry (the pod's extension write). */
  record(payload: FinalOutputPayload): Promise<void>;
  /** A system item carrying `text`, committed like a notification. */
  systemItem(text: string): Item;
  /** Where the `output_partial` events of a streaming answer go (the pod's event stream). */
  emit?(event: Extract<PodEvent, { type: "output_partial" }>): void;
  /**
   * `tool` (default): the answer is a `final_answer` call; `native`: the answer is the response's
   * text, JSON the provider was asked for with `response_format` (docs/output.md, "Strategies").
   */
  readonly strategy?: "tool" | "native";
}

/** The id native answers stream under in `output_partial` events (they have no call id). */
export const NATIVE_ANSWER_ID = "answer";

/** An answer call streaming: the text given to its tracker so far and the partial last shown. */
interface StreamingAnswer {
  tracker: PartialOutputTracker;
  text: string;
  partial: Record<string, unknown> | undefined;
}

/** Where a run stands with its typed answer. */
interface RunState<T> {
  accepted?: { value: T; callId?: string; normalizations: OutputNormalization[] };
  repairs: { call_id?: string; issues: OutputIssue[] }[];
  /** The run must end with this (too many repairs). */
  failed?: OutputValidationError;
  /** Requests made so far in this run, as the last `preRequest` saw them. */
  requests: number;
  forced: boolean;
  /** Its `final_output` entry is written. */
  recorded: boolean;
}

/**
 * The owner of a pod's typed answer under the tool strategy (docs/output.md): the `final_answer`
 * tool (on the tool list from the session's first request, never removed), the check and the
 * repairs of each answer, the note that forces an answer on the last request the run may make, the
 * `final_output` entry, and the run's end — `finished` with the value, or `OutputValidationError`.
 * The tool choice is never changed, and nothing but that one tool definition is added to the
 * request prefix.
 */
export class PodOutput<T = unknown> {
  readonly toolName: string;
  private run: RunState<T> = PodOutput.fresh();
  /** The answer calls streaming in this run, by call id. */
  private streaming = new Map<string, StreamingAnswer>();
  /** The `output_partial` events still being read, in order: a run waits for them before it ends. */
  private shown: Promise<void> = Promise.resolve();

  constructor(private readonly options: PodOutputOptions<T>) {
    this.toolName = options.catalog.render("output_tool_name", {}).trim();
  }

  private static fresh<T>(): RunState<T> {
    return { repairs: [], requests: 0, forced: false, recorded: false };
  }

  /** The provider's structured output carries the answer (no `final_answer` tool). */
  get native(): boolean {
    return this.options.strategy === "native";
  }

  /** The answer tool as the catalog's notes name it ("" under `native`: they ask for JSON instead). */
  private get answerTool(): string {
    return this.native ? "" : this.toolName;
  }

  get schema(): OutputSchema<T> {
    return this.options.schema;
  }

  /** The `final_answer` tool: it checks its own arguments so wrapped and stringified answers are repaired. */
  tool(): Tool {
    const tool = finalAnswerTool<T>({
      name: this.toolName,
      description: this.options.catalog.render("output_tool_description", {}),
      schema: this.options.schema,
      execute: (check, ctx) => this.answer(check, ctx.callId),
    });
    return { ...tool, checksOwnArguments: true };
  }

  /** A run starts: nothing of an earlier run's answer counts. */
  startRun(): void {
    this.run = PodOutput.fresh();
    this.streaming = new Map();
  }

  /**
   * A worker event, watched for the answer tool's arguments: as they stream, each change of the
   * answer read so far is an `output_partial` event (docs/output.md, "Streaming"); for display
   * only, the answer that counts is the one checked when the call is complete. When the call
   * starts, whatever of its arguments did not stream (a provider that sends them whole) is read
   * too, so the last partial is the complete arguments.
   */
  observe(event: WorkerEvent): void {
    const emit = this.options.emit;
    if (emit === undefined) return;
    if (this.native) {
      // A native answer is the response's text; each request's response is a new answer.
      if (event.type === "request_start") this.streaming.delete(NATIVE_ANSWER_ID);
      else if (event.type === "text_delta") this.follow(NATIVE_ANSWER_ID, event.delta, emit);
      return;
    }
    if (event.type === "tool_input_delta") {
      if (event.name === this.toolName) this.follow(event.callId, event.delta, emit);
    } else if (event.type === "tool_call_start" && event.name === this.toolName) {
      const received = this.streaming.get(event.callId)?.text ?? "";
      if (event.arguments.length > received.length && event.arguments.startsWith(received))
        this.follow(event.callId, event.arguments.slice(received.length), emit);
    }
  }

  private follow(callId: string, chunk: string, emit: NonNullable<PodOutputOptions<T>["emit"]>): void {
    const answer = this.streaming.get(callId) ?? {
      tracker: new PartialOutputTracker(this.options.schema),
      text: "",
      partial: undefined,
    };
    this.streaming.set(callId, answer);
    answer.text += chunk;
    const update = answer.tracker.push(chunk);
    this.shown = this.shown
      .then(() => update)
      .then(
        (changed) => {
          if (changed === undefined) return;
          answer.partial = changed.partial ?? answer.partial;
          emit({ type: "output_partial", callId, partial: answer.partial ?? {}, elements: changed.elements });
        },
        () => undefined, // a display that cannot be read is no reason to fail the answer
      );
  }

  /** The answer of the run that just finished (undefined before one was accepted). */
  get accepted(): { value: T } | undefined {
    return this.run.accepted;
  }

  /** Before each request: the forcing note once the run is at its last allowed request. */
  pendingItems(): Item[] {
    const run = this.run;
    if (run.accepted !== undefined || run.forced || run.requests + 1 < this.options.maxRequests) return [];
    run.forced = true;
    const note = this.options.catalog.render("output_forced", { tool: this.answerTool, reason: "max_turns" });
    return [this.options.systemItem(note)];
  }

  /**
   * After each batch of calls: an accepted answer ends the run there (before `max_turns` is checked
   * and before another request); one repair too many fails it.
   */
  async afterToolBatch(requests: number): Promise<AfterToolBatchDecision> {
    await this.shown;
    const run = this.run;
    run.requests = requests;
    if (run.failed !== undefined) return { action: "cancel", reason: run.failed.message };
    if (run.accepted === undefined) return { action: "continue" };
    await this.recordAccepted();
    return { action: "finish" };
  }

  /**
   * The model answered without calls. Under the tool strategy the answer belongs in `final_answer`:
   * text that parses to a valid answer is taken (normalisation `parsed_text`); otherwise the model
   * is told, as a repair; past `max_repairs` the run fails, with the text as the refusal.
   */
  async onTurnEnd(context: TurnEndContext): Promise<TurnEndDecision> {
    await this.shown;
    const run = this.run;
    run.requests = context.requests;
    if (run.accepted !== undefined) {
      await this.recordAccepted();
      return { action: "finish" };
    }
    const text = context.response.map(textOf).join("").trim();
    const parsed = parseJson(text);
    let checked: OutputIssue[] | undefined;
    if (parsed !== undefined) {
      const answer = normalizeAnswer(parsed, this.options.schema);
      if (answer.result.ok) {
        run.accepted = {
          value: answer.result.value,
          // A native answer is JSON text by design; under the tool strategy, text is a fallback.
          normalizations: this.native
            ? answer.normalizations
            : ["parsed_string" as OutputNormalization, ...answer.normalizations],
        };
        await this.recordAccepted();
        return { action: "finish" };
      }
      checked = answer.result.issues;
    }
    const refused = context.stopReason.kind === "content-filter";
    const issues: OutputIssue[] =
      this.native && checked !== undefined
        ? checked
        : [
            {
              path: "",
              message: this.native
                ? text === ""
                  ? "no answer was given: answer with JSON matching the required schema"
                  : "the answer is not a JSON object: answer with JSON matching the required schema"
                : text === ""
                  ? `no answer was given: call ${this.toolName} with it`
                  : `the answer was written as text: call ${this.toolName} with it as the arguments`,
            },
          ];
    if (refused || run.repairs.length >= this.options.maxRepairs) {
      throw new OutputValidationError({
        raw: text,
        issues,
        repairs: run.repairs.length,
        ...(text === "" && !refused
          ? {}
          : { refusal: text === "" ? "the provider filtered the answer" : text }),
      });
    }
    run.repairs.push({ issues });
    return { action: "continue", items: [this.options.systemItem(this.repairText(issues))] };
  }

  /** The error a run ends with: the output's failure in place of the worker's cancellation. */
  errorOf(error: unknown): unknown {
    const failed = this.run.failed;
    return failed !== undefined && CancelledError.isInstance(error) ? failed : error;
  }

  private answer(check: FinalAnswerCheck<T>, callId: string): ToolOutput {
    const run = this.run;
    if (run.accepted !== undefined) {
      // A second answer in the same run changes nothing: the first one stands.
      return { summary: this.options.catalog.render("output_accepted", {}) };
    }
    if (check.ok) {
      run.accepted = { value: check.value, callId, normalizations: check.normalizations };
      return { summary: this.options.catalog.render("output_accepted", {}) };
    }
    if (run.repairs.length >= this.options.maxRepairs) {
      run.failed = new OutputValidationError({
        raw: check.raw,
        issues: check.issues,
        repairs: run.repairs.length,
      });
      return { summary: this.repairText(check.issues), is_error: true };
    }
    run.repairs.push({ call_id: callId, issues: check.issues });
    return { summary: this.repairText(check.issues), is_error: true };
  }

  private repairText(issues: readonly OutputIssue[]): string {
    return this.options.catalog.render("output_repair", {
      tool: this.answerTool,
      issues: issues.map((issue) => ({ path: issue.path, message: issue.message })),
      // Called after the repair was counted: this is correction number `repairs.length`.
      repair: Math.max(this.run.repairs.length, 1),
      max_repairs: this.options.maxRepairs,
    });
  }

  private async recordAccepted(): Promise<void> {
    const run = this.run;
    if (run.accepted === undefined || run.recorded) return;
    run.recorded = true;
    await this.options.record({
      value: run.accepted.value,
      schema_digest: this.options.schema.digest,
      ...(run.accepted.callId === undefined ? {} : { call_id: run.accepted.callId }),
      normalizations: run.accepted.normalizations,
      repairs: run.repairs,
    });
  }
}

/** Checks an answer as `finalAnswerTool` does (for callers outside a run, e.g. a dispatcher re-check). */
export function checkAnswer<T>(value: unknown, schema: OutputSchema<T>): FinalAnswerCheck<T> {
  return checkFinalAnswerArguments(value, schema);
}

function parseJson(text: string): unknown {
  if (!(text.startsWith("{") || text.startsWith('"'))) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function textOf(item: Item): string {
  if (item.type !== "message") return "";
  return item.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}
