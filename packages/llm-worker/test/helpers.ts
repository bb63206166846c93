// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import { type ProviderDouble, startProviderDouble, type Wire } from "@podkit/testkit";
import { afterEach } from "vitest";
import { z } from "zod";
import {
  createModelAdapter,
  type Item,
  type RetryPolicy,
  type Tool,
  ToolServer,
  Worker,
  type WorkerEvent,
  type WorkerOptions,
} from "../src/index.js";

/** A model ref per wire; the OpenAI Responses one names a reasoning model so encrypted reasoning is requested. */
export const REFS: Record<Wire, string> = {
  anthropic: "anthropic/claude-sonnet-4-5",
  "openai-responses": "openai/gpt-5",
  "openai-chat": "openai-chat/gpt-4.1",
  google: "google/gemini-2.5-flash",
};

export const WIRES: Wire[] = ["anthropic", "openai-responses", "openai-chat", "google"];

/**
 * Retries fast so fault tests take milliseconds, still through real timers. The first-event and
 * idle timeouts stay generous: on a busy machine a healthy stream from the double can go quiet
 * for longer than a few hundred milliseconds, and a timeout that fires then retries a request
 * whose scripted answer is gone. Tests of those timeouts set their own.
 */
export const FAST_RETRY: Partial<RetryPolicy> = {
  maxAttempts: 3,
  baseDelayMs: 5,
  maxDelayMs: 20,
  totalBudgetMs: 10_000,
  firstEventTimeoutMs: 20_000,
  idleTimeoutMs: 20_000,
  maxContinuations: 2,
};

const doubles: ProviderDouble[] = [];
afterEach(async () => {
  await Promise.all(doubles.splice(0).map((d) => d.close()));
});

/** Starts a provider double that is closed after the test. */
export async function startDouble(wire: Wire): Promise<ProviderDouble> {
  const double = await startProviderDouble({ wire });
  doubles.push(double);
  return double;
}

/** A worker talking to `double` through the real adapter for its wire, recording history and events. */
export function workerFor(
  double: ProviderDouble,
  options: Partial<WorkerOptions> = {},
): { worker: Worker; persisted: Item[]; events: WorkerEvent[] } {
  const persisted: Item[] = [];
  const events: WorkerEvent[] = [];
  const worker = new Worker({
    model: createModelAdapter(REFS[double.wire], { apiKey: "test-key", baseUrl: double.baseUrl }),
    systemPrompt: "You are a test pod.",
    retry: FAST_RETRY,
    onHistoryAppend: (item) => {
      persisted.push(structuredClone(item));
    },
    ...options,
  });
  worker.subscribe((event) => events.push(event));
  return { worker, persisted, events };
}

/** A tool that records each call and answers with its argument; `executions` counts runs per call id. */
export function recordingTool(
  name: string,
  options: { delayMs?: number; content?: (text: string) => string } = {},
): { tool: Tool<{ text: string }>; executions: Map<string, number>; calls: string[] } {
  const executions = new Map<string, number>();
  const calls: string[] = [];
  const tool: Tool<{ text: string }> = {
    name,
    description: `Echoes text (${name}).`,
    inputSchema: z.object({ text: z.string() }),
    async execute(args, ctx) {
      executions.set(ctx.callId, (executions.get(ctx.callId) ?? 0) + 1);
      calls.push(args.text);
      if (options.delayMs) await sleep(options.delayMs, ctx.signal);
      const result: { summary: string; content?: string } = { summary: `${name}: ${args.text}` };
      if (options.content) result.content = options.content(args.text);
      return result;
    },
  };
  return { tool, executions, calls };
}

/** Registers tools on a fresh tool server. */
export function toolServer(...tools: Tool[]): ToolServer {
  const server = new ToolServer();
  for (const tool of tools) server.registerTool(() => tool);
  return server;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** Waits until `predicate` holds, polling (bounded generously: the machine may be busy). */
export async function waitFor(predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error("waitFor: condition not met in time");
    await sleep(5);
  }
}

/** The request body's text, for byte-level assertions. */
export function bodies(double: ProviderDouble): any[] {
  return double.requests.map((request) => request.body);
}
