import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { describe, expect, it } from "vitest";
import { caught } from "./helpers.js";
import { readAllSegments, testTools, text, usePodWorlds, type World } from "./pod-harness.js";
import { allAttributeText, useTelemetryCapture } from "./telemetry-harness.js";

const world = usePodWorlds();
const capture = useTelemetryCapture();

const MODEL = "claude-sonnet-4-5";
const ERROR = 2; // SpanStatusCode.ERROR
const UNSET = 0;

/** The session and segment the world's only pod wrote. */
async function sessionOf(w: World): Promise<{ sessionId: string; segmentId: string }> {
  const [key] = [...(await readAllSegments(w.workspace)).keys()];
  const [sessionId, segmentId] = (key ?? "").split("/");
  return { sessionId: sessionId ?? "", segmentId: segmentId ?? "" };
}

const server = (w: World) => ({
  "server.address": "127.0.0.1",
  "server.port": Number(new URL(w.double.baseUrl).port),
});

class QuotaExceededError extends Error {
  override name = "QuotaExceededError";
}

function twoToolTurn(w: World): void {
  w.double.enqueue(
    {
      id: "msg_tools",
      parts: [
        { type: "tool_call", id: "toolu_a", name: "left", arguments: { n: 1 } },
        { type: "tool_call", id: "toolu_b", name: "right", arguments: { n: 2 } },
      ],
      usage: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 1000 },
    },
    {
      id: "msg_answer",
      parts: [{ type: "text", text: "both done" }],
      usage: { inputTokens: 1300, outputTokens: 5, cacheWriteTokens: 100 },
    },
  );
}

describe("pod telemetry: spans", () => {
  it("a scripted two-tool turn produces exactly this span tree, with the GenAI attributes", async () => {
    const otel = capture();
    const w = await world({ toolPackages: [testTools({ left: () => "L", right: () => "R" })] });
    const pod = await w.pod({ telemetry: otel.options });
    twoToolTurn(w);
    await pod.run("use both tools");
    const { sessionId, segmentId } = await sessionOf(w);
    const session = { "gen_ai.conversation.id": sessionId, "podkit.segment.id": segmentId };
    const chat = (request: number) => ({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": MODEL,
      "gen_ai.request.max_tokens": 8192,
      "podkit.request": request,
      ...server(w),
      ...session,
    });
    const tool = (name: string, id: string) => ({
      name: `execute_tool ${name}`,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": id,
        "gen_ai.tool.type": "function",
        ...session,
      },
      status: { code: UNSET },
      events: [],
      children: [],
    });
    expect(otel.trees()).toEqual([
      {
        name: "invoke_agent test",
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.provider.name": "anthropic",
          "gen_ai.agent.name": "test",
          "gen_ai.request.model": MODEL,
          "podkit.run.trigger": "user",
          "podkit.run.status": "finished",
          "gen_ai.usage.input_tokens": 2500,
          "gen_ai.usage.output_tokens": 45,
          "gen_ai.usage.cache_read.input_tokens": 1000,
          "gen_ai.usage.cache_creation.input_tokens": 100,
          "gen_ai.response.finish_reasons": ["end_turn"],
          ...session,
        },
        status: { code: UNSET },
        events: [],
        children: [
          {
            name: `chat ${MODEL}`,
            attributes: {
              ...chat(1),
              "gen_ai.usage.input_tokens": 1200,
              "gen_ai.usage.output_tokens": 40,
              "gen_ai.usage.cache_read.input_tokens": 1000,
              "gen_ai.usage.cache_creation.input_tokens": 0,
              "gen_ai.response.finish_reasons": ["tool_use"],
              "gen_ai.response.model": MODEL,
              "gen_ai.response.id": "msg_tools",
              "podkit.stop_reason": "tool-calls",
            },
            status: { code: UNSET },
            events: [],
            children: [],
          },
          tool("left", "toolu_a"),
          tool("right", "toolu_b"),
          {
            name: `chat ${MODEL}`,
            attributes: {
              ...chat(2),
              "gen_ai.usage.input_tokens": 1300,
              "gen_ai.usage.output_tokens": 5,
              "gen_ai.usage.cache_read.input_tokens": 0,
              "gen_ai.usage.cache_creation.input_tokens": 100,
              "gen_ai.response.finish_reasons": ["end_turn"],
              "gen_ai.response.model": MODEL,
              "gen_ai.response.id": "msg_answer",
              "podkit.stop_reason": "stop",
            },
            status: { code: UNSET },
            events: [],
            children: [],
          },
        ],
      },
    ]);
    // Span kinds: the model request is a client call; the run and the tools are in-process.
    const kinds = Object.fromEntries(otel.spans().map((span) => [span.name.split(" ")[0], span.kind]));
    expect(kinds).toEqual({ invoke_agent: 0, chat: 2, execute_tool: 0 });
  });

  it("a retried request shows each retry as an event of its one chat span, and a broken stream its continuation", async () => {
    const otel = capture();
    const w = await world();
    const pod = await w.pod({ telemetry: otel.options });
    w.double.enqueue(
      { fault: { kind: "status", status: 529, retryAfter: 0 } },
      { fault: { kind: "status", status: 503, retryAfter: 0 } },
      {
        parts: [{ type: "text", text: "a long answer that breaks", chunkSize: 4 }],
        fault: { kind: "reset", afterEvents: 4 },
      },
      text("the answer"),
    );
    const result = await pod.run("hello");
    expect(result.text).toContain("the answer");
    const [run] = otel.trees();
    expect(run?.children.map((child) => child.name)).toEqual([`chat ${MODEL}`]);
    const events = run?.children[0]?.events ?? [];
    expect(events.map((event) => event.name)).toEqual([
      "podkit.request.retry",
      "podkit.request.retry",
      "podkit.request.continuation",
    ]);
    expect(events[0]?.attributes).toMatchObject({
      "podkit.request.attempt": 1,
      "podkit.retry.delay_ms": 0,
      "error.type": "ProviderError",
    });
    expect(events[1]?.attributes).toMatchObject({
      "podkit.request.attempt": 2,
      "error.type": "ProviderError",
    });
    expect(events[2]?.attributes).toMatchObject({ "podkit.request.continuation": 1 });
    expect(run?.children[0]?.status.code).toBe(UNSET);
    expect(w.double.requests).toHaveLength(4);
  });

  it("a failed tool call carries its error: the thrown class, or tool_error for an error result", async () => {
    const otel = capture();
    const tools = testTools({
      quota: () => {
        throw new QuotaExceededError("monthly quota used up");
      },
    });
    const w = await world({ toolPackages: [tools] });
    const pod = await w.pod({ telemetry: otel.options });
    w.double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_q", name: "quota", arguments: {} },
          { type: "tool_call", id: "toolu_x", name: "no_such_tool", arguments: {} },
        ],
      },
      text("sorry"),
    );
    await pod.run("try the tools");
    const [run] = otel.trees();
    expect(run?.status.code).toBe(UNSET);
    const spans = Object.fromEntries((run?.children ?? []).map((child) => [child.name, child]));
    const quota = spans["execute_tool quota"];
    expect(quota?.status).toEqual({ code: ERROR, message: "monthly quota used up" });
    expect(quota?.attributes["error.type"]).toBe("QuotaExceededError");
    expect(quota?.events).toEqual([
      {
        name: "exception",
        attributes: expect.objectContaining({
          "exception.type": "QuotaExceededError",
          "exception.message": "monthly quota used up",
        }),
      },
    ]);
    const unknown = spans["execute_tool no_such_tool"];
    // An error result is tool output: its text stays out unless contents are recorded.
    expect(unknown?.status).toEqual({ code: ERROR, message: "the tool returned an error result" });
    expect(unknown?.attributes["error.type"]).toBe("tool_error");
  });

  it("a failed run carries its error class on the run span and on the request that failed", async () => {
    const otel = capture();
    const w = await world();
    const pod = await w.pod({ telemetry: otel.options });
    w.double.enqueue({ fault: { kind: "status", status: 400, body: "bad request" } });
    const error = await caught(pod.run("hello"));
    const [run] = otel.trees();
    expect(run?.name).toBe("invoke_agent test");
    expect(run?.status).toEqual({ code: ERROR, message: error.message });
    expect(run?.attributes["error.type"]).toBe("ProviderError");
    expect(run?.events.map((event) => [event.name, event.attributes["exception.type"]])).toEqual([
      ["exception", "ProviderError"],
    ]);
    const [request] = run?.children ?? [];
    expect(request?.name).toBe(`chat ${MODEL}`);
    expect(request?.status.code).toBe(ERROR);
    expect(request?.attributes["error.type"]).toBe("ProviderError");
    const durations = await otel.histogram("gen_ai.client.operation.duration");
    expect(
      durations.map((point) => [point.attributes["gen_ai.operation.name"], point.attributes["error.type"]]),
    ).toEqual([
      ["chat", "ProviderError"],
      ["invoke_agent", "ProviderError"],
    ]);
  });
});

describe("pod telemetry: contents", () => {
  const SECRET = "the vault code is 4417";

  async function tracedTurn(recordContents: boolean) {
    const otel = capture();
    const w = await world({
      systemPrompt: "You guard the vault.",
      toolPackages: [testTools({ open_vault: (args) => `opened with ${String(args.code)}` })],
    });
    const pod = await w.pod({ telemetry: { ...otel.options, recordContents } });
    w.double.enqueue(
      { parts: [{ type: "tool_call", id: "toolu_v", name: "open_vault", arguments: { code: "4417" } }] },
      text("The vault is open."),
    );
    await pod.run(SECRET);
    return { otel, systemPrompt: pod.systemPrompt };
  }

  it("records no prompt, completion, system prompt or tool input/output unless the application opts in", async () => {
    const { otel } = await tracedTurn(false);
    // The spans are there (a run, two requests, a tool call); only their contents are not.
    expect(
      otel
        .spans()
        .map((span) => span.name.split(" ")[0])
        .sort(),
    ).toEqual(["chat", "chat", "execute_tool", "invoke_agent"]);
    const text = allAttributeText(otel.spans());
    for (const content of [
      SECRET,
      "4417",
      "You guard the vault.",
      "The vault is open.",
      "gen_ai.input.messages",
    ]) {
      expect(text).not.toContain(content);
    }
  });

  it("records them in the conventions' message format when opted in", async () => {
    const { otel, systemPrompt } = await tracedTurn(true);
    expect(systemPrompt).toContain("You guard the vault.");
    const spans = Object.fromEntries(
      otel.spans().map((span) => [`${span.name} ${span.attributes["podkit.request"] ?? ""}`, span]),
    );
    const run = spans["invoke_agent test "]?.attributes ?? {};
    expect(JSON.parse(String(run["gen_ai.input.messages"]))).toEqual([
      { role: "user", parts: [{ type: "text", content: SECRET }] },
    ]);
    expect(JSON.parse(String(run["gen_ai.system_instructions"]))).toEqual([
      { type: "text", content: systemPrompt },
    ]);
    expect(JSON.parse(String(run["gen_ai.output.messages"]))).toEqual([
      {
        role: "assistant",
        parts: [{ type: "text", content: "The vault is open." }],
        finish_reason: "end_turn",
      },
    ]);
    const tool = spans["execute_tool open_vault "]?.attributes ?? {};
    expect(tool["gen_ai.tool.call.arguments"]).toBe('{"code":"4417"}');
    expect(tool["gen_ai.tool.call.result"]).toBe("opened with 4417");
    const second = spans[`chat ${MODEL} 2`]?.attributes ?? {};
    expect(JSON.parse(String(second["gen_ai.input.messages"]))).toEqual([
      { role: "user", parts: [{ type: "text", content: SECRET }] },
      {
        role: "assistant",
        parts: [{ type: "tool_call", id: "toolu_v", name: "open_vault", arguments: { code: "4417" } }],
      },
      { role: "tool", parts: [{ type: "tool_call_response", id: "toolu_v", response: "opened with 4417" }] },
    ]);
    expect(JSON.parse(String(second["gen_ai.output.messages"]))).toEqual([
      {
        role: "assistant",
        parts: [{ type: "text", content: "The vault is open." }],
        finish_reason: "end_turn",
      },
    ]);
  });
});

describe("pod telemetry: metrics and the global API", () => {
  it("records token usage and operation duration histograms with the GenAI attributes", async () => {
    const otel = capture();
    const w = await world({ toolPackages: [testTools({ left: () => "L", right: () => "R" })] });
    const pod = await w.pod({ telemetry: otel.options });
    twoToolTurn(w);
    await pod.run("use both tools");
    const tokens = await otel.histogram("gen_ai.client.token.usage");
    const base = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": MODEL,
      "gen_ai.response.model": MODEL,
      ...server(w),
    };
    expect(tokens.map((point) => [point.attributes, point.value.count, point.value.sum])).toEqual([
      [{ ...base, "gen_ai.token.type": "input" }, 2, 2500],
      [{ ...base, "gen_ai.token.type": "output" }, 2, 45],
    ]);
    const durations = await otel.histogram("gen_ai.client.operation.duration");
    expect(durations.map((point) => [point.attributes["gen_ai.operation.name"], point.value.count])).toEqual([
      ["chat", 2],
      ["invoke_agent", 1],
    ]);
  });

  it("uses the global SDK when no providers are given (even one registered after the pod was built), nesting under the caller's span", async () => {
    const otel = capture();
    const contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    try {
      const w = await world({
        toolPackages: [
          testTools({
            // A library the tool calls opens its own span: it must land under the run.
            lookup: () => {
              trace.getTracer("a-library").startSpan("library work").end();
              return "found";
            },
          }),
        ],
      });
      // Built before the SDK is registered, as when an application sets up telemetry late.
      const pod = await w.pod();
      trace.setGlobalTracerProvider(otel.tracerProvider);
      metrics.setGlobalMeterProvider(otel.meterProvider);
      w.double.enqueue(
        { parts: [{ type: "tool_call", id: "toolu_l", name: "lookup", arguments: {} }] },
        text("done"),
      );
      const app = trace.getTracer("the-app");
      await app.startActiveSpan("handle request", async (span) => {
        await pod.run("look it up");
        span.end();
      });
    } finally {
      trace.disable();
      metrics.disable();
      context.disable();
    }
    const tokens = await otel.histogram("gen_ai.client.token.usage");
    expect(tokens.map((point) => point.value.count)).toEqual([2, 2]);
    const [root] = otel.trees();
    expect(root?.name).toBe("handle request");
    expect(root?.children.map((child) => child.name)).toEqual(["invoke_agent test"]);
    // Tool code runs in the run's context: a span a library opens there lands under the run.
    expect(root?.children[0]?.children.map((child) => child.name)).toEqual([
      `chat ${MODEL}`,
      "execute_tool lookup",
      "library work",
      `chat ${MODEL}`,
    ]);
  });

  it("records nothing and still runs when no SDK is registered", async () => {
    const otel = capture();
    const w = await world();
    const pod = await w.pod();
    w.double.enqueue(text("fine"), text("traced"));
    expect((await pod.run("hello")).text).toBe("fine");
    // Positive control: the same pod, once an SDK is registered, records its next run (and only that one).
    trace.setGlobalTracerProvider(otel.tracerProvider);
    try {
      expect((await pod.run("again")).text).toBe("traced");
    } finally {
      trace.disable();
    }
    expect(otel.trees().map((root) => root.name)).toEqual(["invoke_agent test"]);
    expect(otel.spans().filter((span) => span.name.startsWith("chat"))).toHaveLength(1);
  });

  it("records the histograms of a run whose spans nobody records (a meter provider without a tracer SDK)", async () => {
    // A run with neither records nothing and skips its events; a meter alone must still get every point.
    const otel = capture();
    const w = await world();
    const pod = await w.pod();
    metrics.setGlobalMeterProvider(otel.meterProvider);
    try {
      w.double.enqueue(text("counted"));
      expect((await pod.run("hello")).text).toBe("counted");
    } finally {
      metrics.disable();
    }
    expect(otel.spans()).toEqual([]);
    const tokens = await otel.histogram("gen_ai.client.token.usage");
    expect(tokens.map((point) => [point.attributes["gen_ai.token.type"], point.value.count])).toEqual([
      ["input", 1],
      ["output", 1],
    ]);
    const durations = await otel.histogram("gen_ai.client.operation.duration");
    expect(durations.map((point) => [point.attributes["gen_ai.operation.name"], point.value.count])).toEqual([
      ["chat", 1],
      ["invoke_agent", 1],
    ]);
  });
});
