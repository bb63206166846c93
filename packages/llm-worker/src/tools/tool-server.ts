import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import { ToolError } from "../errors.js";
import type { ToolCallItem } from "../items/item.js";
import { capToolOutput, SUMMARY_CONTENT_SEPARATOR_BYTES } from "./cap-output.js";
import type { Tool, ToolFactory, ToolOutput } from "./tool.js";
import { type CompiledToolSchema, compileToolSchema } from "./tool-schema.js";

/** Byte caps for tool output; `perTool` overrides `defaultMaxBytes` by tool name. */
export interface ToolOutputLimits {
  defaultMaxBytes: number;
  perTool?: Readonly<Record<string, number>>;
}

export const DEFAULT_TOOL_OUTPUT_LIMITS: ToolOutputLimits = { defaultMaxBytes: 65536 };

interface RegisteredTool {
  tool: Tool;
  schema: CompiledToolSchema;
}

function isTool(value: unknown): value is Tool {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.name === "string" &&
    typeof v.description === "string" &&
    typeof v.execute === "function" &&
    typeof v.inputSchema === "object" &&
    v.inputSchema !== null
  );
}

/**
 * Holds the tools a worker offers. `registerTool` only queues a factory; `flushPending()`
 * materializes every queued factory exactly once and locks the server, after which the tool
 * names are final (the pod calls it before rendering the system prompt; the worker calls it at
 * the start of its first run).
 */
export class ToolServer {
  private readonly queue: ToolFactory[] = [];
  private readonly tools = new Map<string, RegisteredTool>();
  private flushing: Promise<readonly string[]> | undefined;
  private sortedDefinitions: LanguageModelV3FunctionTool[] = [];
  /** The deferred tools among `sortedDefinitions` (fixed at flush, like them). */
  private deferredAtFlush: ReadonlySet<string> = new Set();
  private limits: ToolOutputLimits;

  constructor(options: { outputLimits?: ToolOutputLimits } = {}) {
    this.limits = options.outputLimits ?? DEFAULT_TOOL_OUTPUT_LIMITS;
  }

  /** True once `flushPending()` has been called; registering is then an error. */
  get locked(): boolean {
    return this.flushing !== undefined;
  }

  /** Queues a tool factory (or a ready tool). Throws `ToolError` once the server is locked. */
  registerTool(factory: ToolFactory | Tool): void {
    if (this.locked) {
      const name = isTool(factory) ? ` "${factory.name}"` : "";
      throw new ToolError(
        `cannot register tool${name}: the tool server is locked (flushPending() already ran, so the tool list is final); register tools before the first run`,
        isTool(factory) ? { toolName: factory.name } : undefined,
      );
    }
    this.queue.push(isTool(factory) ? () => factory : factory);
  }

  /** Sets the byte caps applied to tool output. */
  setOutputLimits(limits: ToolOutputLimits): void {
    this.limits = limits;
  }

  /**
   * Materializes every queued factory (once; later calls return the same result) and locks
   * the server. Resolves to the tool names sorted by code unit. Rejects with `ToolError` on a
   * duplicate name or a factory that fails.
   */
  flushPending(): Promise<readonly string[]> {
    this.flushing ??= this.materialize();
    return this.flushing;
  }

  private async materialize(): Promise<readonly string[]> {
    const factories = this.queue.splice(0);
    for (const factory of factories) {
      let produced: Tool | readonly Tool[];
      try {
        produced = await factory();
      } catch (cause) {
        throw new ToolError(
          `a tool factory failed: ${cause instanceof Error ? cause.message : String(cause)}`,
          { cause },
        );
      }
      for (const tool of Array.isArray(produced) ? produced : [produced]) this.add(tool);
    }
    this.sortedDefinitions = [...this.tools.values()]
      .map(({ tool, schema }) => ({
        type: "function" as const,
        name: tool.name,
        description: tool.description,
        inputSchema: schema.jsonSchema,
      }))
      .sort(byName);
    this.deferredAtFlush = new Set(
      [...this.tools.values()].filter(({ tool }) => tool.deferred === true).map(({ tool }) => tool.name),
    );
    return this.sortedDefinitions.map((definition) => definition.name);
  }

  private add(tool: unknown): void {
    if (!isTool(tool)) {
      throw new ToolError(
        "a tool factory returned something that is not a tool (expected {name, description, inputSchema, execute})",
      );
    }
    if (this.tools.has(tool.name)) {
      throw new ToolError(
        `duplicate tool name "${tool.name}": two registered tools share it; rename or drop one of them`,
        { toolName: tool.name },
      );
    }
    let schema: CompiledToolSchema;
    try {
      schema = compileToolSchema(tool);
    } catch (cause) {
      throw new ToolError(`tool "${tool.name}" has an input schema that cannot be converted`, {
        toolName: tool.name,
        cause,
      });
    }
    this.tools.set(tool.name, { tool, schema });
  }

  /** True when tool `name` is registered and deferred (`Tool.deferred`; docs/tools-deferred.md). */
  isDeferred(name: string): boolean {
    return this.tools.get(name)?.tool.deferred === true;
  }

  /**
   * The names of the deferred tools among `definitions()`: fixed at flush like them, so a request
   * built from both is the same on every request of a session.
   */
  deferredNames(): ReadonlySet<string> {
    return this.deferredAtFlush;
  }

  /**
   * The deferred tools' current definitions, sorted by name: what `find_tools` searches. Unlike
   * `definitions()` these follow `replaceDeferred` (a server's changed tool list).
   */
  deferredDefinitions(): LanguageModelV3FunctionTool[] {
    return [...this.tools.values()]
      .filter(({ tool }) => tool.deferred === true)
      .map(({ tool, schema }) => ({
        type: "function" as const,
        name: tool.name,
        description: tool.description,
        inputSchema: schema.jsonSchema,
      }))
      .sort(byName);
  }

  /**
   * Replaces deferred tools after the flush (an MCP server changed its tool list): `remove` names
   * current deferred tools, `add` brings deferred tools whose names no tool that is not deferred
   * has. `definitions()` and `deferredNames()` stay as flushed (the request must not change), so
   * only a caller that keeps deferred tools off the request (the `find_tools`/`call_tool` pair)
   * may use this. Throws `ToolError` without changing anything when a tool does not qualify.
   */
  replaceDeferred(remove: readonly string[], add: readonly Tool[]): void {
    const compiled: RegisteredTool[] = [];
    for (const name of remove) {
      if (!this.isDeferred(name)) throw new ToolError(`"${name}" is not a deferred tool`, { toolName: name });
    }
    for (const tool of add) {
      if (!isTool(tool) || tool.deferred !== true) {
        throw new ToolError("replaceDeferred only takes tools marked deferred");
      }
      const existing = this.tools.get(tool.name);
      if (
        (existing !== undefined && existing.tool.deferred !== true) ||
        compiled.some((c) => c.tool.name === tool.name)
      ) {
        throw new ToolError(`duplicate tool name "${tool.name}"`, { toolName: tool.name });
      }
      try {
        compiled.push({ tool, schema: compileToolSchema(tool) });
      } catch (cause) {
        throw new ToolError(`tool "${tool.name}" has an input schema that cannot be converted`, {
          toolName: tool.name,
          cause,
        });
      }
    }
    for (const name of remove) this.tools.delete(name);
    for (const registered of compiled) this.tools.set(registered.tool.name, registered);
  }

  /** True when tool `name` is registered and declares `readOnly: true` (it changes nothing). */
  isReadOnly(name: string): boolean {
    return this.tools.get(name)?.tool.readOnly === true;
  }

  /** Tool names sorted by code unit (empty before `flushPending()`). */
  names(): readonly string[] {
    return this.sortedDefinitions.map((definition) => definition.name);
  }

  /** Provider tool definitions, sorted by name; the same array on every call (cache stability). */
  definitions(): readonly LanguageModelV3FunctionTool[] {
    return this.sortedDefinitions;
  }

  /**
   * Runs one tool call: parses and validates its arguments, executes it, and caps its output.
   * Never throws for a tool's own failure: unknown tools, bad arguments and thrown errors
   * come back as error results the model can read.
   */
  async execute(call: ToolCallItem, signal: AbortSignal): Promise<ToolOutput> {
    return this.cap(call.name, await this.executeUncapped(call, signal));
  }

  /** `execute` without the output cap (the worker caps after `postToolCall` may have rewritten it). */
  async executeUncapped(call: ToolCallItem, signal: AbortSignal): Promise<ToolOutput> {
    const registered = this.tools.get(call.name);
    if (!registered) {
      return errorOutput(
        `unknown tool "${call.name}"; available tools: ${this.names().join(", ") || "(none)"}`,
      );
    }
    let args: unknown;
    try {
      args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
    } catch (cause) {
      return errorOutput(
        `the arguments for "${call.name}" are not valid JSON (${(cause as Error).message}); send a JSON object matching the tool's input schema`,
      );
    }
    // A tool that checks its own arguments (a typed answer repaired before it is judged) gets them as sent.
    const parsed =
      registered.tool.checksOwnArguments === true
        ? ({ ok: true, value: args } as const)
        : registered.schema.check(args);
    if (!parsed.ok) {
      return errorOutput(`invalid arguments for "${call.name}": ${parsed.message}`);
    }
    let output: ToolOutput;
    try {
      output = await registered.tool.execute(parsed.value, { signal, callId: call.call_id });
    } catch (cause) {
      if (signal.aborted) throw cause;
      const failed = errorOutput(
        `tool "${call.name}" failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      );
      thrownBy.set(failed, cause instanceof Error ? cause : new Error(String(cause)));
      return failed;
    }
    if (typeof output !== "object" || output === null || typeof output.summary !== "string") {
      return errorOutput(`tool "${call.name}" returned no summary (expected {summary, content?})`);
    }
    return output;
  }

  /**
   * Applies the byte cap of `toolName` to what the model sees of an output: summary and content
   * together (the summary first, the content gets what is left). Capping a capped output
   * changes nothing, so a rewritten result can be capped again.
   */
  cap(toolName: string, output: ToolOutput): ToolOutput {
    const max = this.limits.perTool?.[toolName] ?? this.limits.defaultMaxBytes;
    const capped: ToolOutput = { summary: capToolOutput(output.summary, max) };
    if (output.content !== undefined && output.content !== "") {
      const left = max - Buffer.byteLength(capped.summary, "utf8") - SUMMARY_CONTENT_SEPARATOR_BYTES;
      if (left > 0) capped.content = capToolOutput(output.content, left);
    } else if (output.content !== undefined) {
      capped.content = output.content;
    }
    if (output.is_error) capped.is_error = true;
    // Media are no text to cut: the media store fits them to the provider (docs/media.md).
    if (output.media !== undefined) capped.media = output.media;
    return capped;
  }
}

/**
 * What a tool threw, by the error output it became. The model sees only the summary; telemetry
 * records the error's class, so the exception travels beside the output instead of inside it.
 */
const thrownBy = new WeakMap<ToolOutput, Error>();

/** The exception an error output of `executeUncapped` came from (undefined for other outputs). */
export function thrownByTool(output: ToolOutput): Error | undefined {
  return thrownBy.get(output);
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function errorOutput(message: string): ToolOutput {
  return { summary: message, is_error: true };
}
