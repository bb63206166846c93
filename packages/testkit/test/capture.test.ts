import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { APICallError } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { NO_RESPONSE_LEFT, simulatePromptCache, TestkitError } from "../src/index.js";
import { collect } from "./support/collect.js";
import { useDoubles } from "./support/doubles.js";
import { basicCall, modelFor } from "./support/models.js";

const startDouble = useDoubles();
const reply = { parts: [{ type: "text" as const, text: "ok" }] };
const systemPrompt = "You are Pod Ünïcödé — 日本語 ✓.\nKeep answers short.";
const ephemeral = { anthropic: { cacheControl: { type: "ephemeral" } } };

/** A prompt with a system message, two user turns and two tools; breakpoints on system, the last tool and turn 1. */
function anthropicCall(secondTurn: string): LanguageModelV3CallOptions {
  return basicCall({
    prompt: [
      { role: "system", content: systemPrompt, providerOptions: ephemeral },
      { role: "user", content: [{ type: "text", text: "first question" }], providerOptions: ephemeral },
      { role: "assistant", content: [{ type: "text", text: "first answer" }] },
      { role: "user", content: [{ type: "text", text: secondTurn }] },
    ],
    tools: [
      { type: "function", name: "read_file", inputSchema: { type: "object", properties: {} } },
      {
        type: "function",
        name: "list_dir",
        inputSchema: { type: "object", properties: {} },
        providerOptions: ephemeral,
      },
    ],
  });
}

describe("request capture", () => {
  it("keeps the Anthropic body, headers, system prompt bytes, tool order and cache_control positions", async () => {
    const double = await startDouble({ wire: "anthropic", responses: [reply] });
    await collect(
      (await modelFor("anthropic", double.baseUrl).doStream(anthropicCall("second question"))).stream,
    );

    const [request] = double.requests;
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe("/v1/messages");
    expect(request?.headers["x-api-key"]).toBe("test-anthropic-key");
    expect(request?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(request?.body.stream).toBe(true);
    expect(request?.body.system).toEqual([
      { type: "text", text: systemPrompt, cache_control: { type: "ephemeral" } },
    ]);
    expect(Buffer.byteLength(request?.body.system[0].text, "utf8")).toBe(
      Buffer.byteLength(systemPrompt, "utf8"),
    );
    expect(request?.rawBody).toContain(JSON.stringify(systemPrompt));
    expect(request?.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["read_file", "list_dir"]);
    expect(request?.body.tools.map((tool: { cache_control?: unknown }) => tool.cache_control)).toEqual([
      undefined,
      { type: "ephemeral" },
    ]);
    const breakpoints = request?.body.messages.map((message: { content: { cache_control?: unknown }[] }) =>
      message.content.map((part) => part.cache_control !== undefined),
    );
    expect(breakpoints).toEqual([[true], [false], [false]]);
  });

  it("captured Anthropic requests feed the cache simulator: a second turn reads the prefix the first wrote", async () => {
    const double = await startDouble({ wire: "anthropic", responses: [reply, reply] });
    const model = modelFor("anthropic", double.baseUrl);
    await collect((await model.doStream(anthropicCall("second question"))).stream);
    await collect((await model.doStream(anthropicCall("a different second question"))).stream);
    const report = simulatePromptCache(double.requests, "anthropic");
    const [first, second] = report.requests;
    expect(first?.cacheReadTokens).toBe(0);
    expect(first?.cacheWriteTokens).toBeGreaterThan(0);
    expect(second?.cacheReadTokens).toBe(first?.cacheWriteTokens);
    expect(second?.cacheWriteTokens).toBe(0);
    expect(second?.uncachedTokens).toBeGreaterThan(first?.uncachedTokens ?? Number.POSITIVE_INFINITY);
  });

  it("keeps the OpenAI Responses prompt cache key, instructions and bearer token", async () => {
    const double = await startDouble({ wire: "openai-responses", responses: [reply] });
    const call = basicCall({
      prompt: [
        { role: "system", content: systemPrompt },
        { role: "user", content: [{ type: "text", text: "hi" }] },
      ],
      providerOptions: { openai: { promptCacheKey: "pod-42", instructions: systemPrompt } },
    });
    await collect((await modelFor("openai-responses", double.baseUrl).doStream(call)).stream);
    const [request] = double.requests;
    expect(request?.path).toBe("/v1/responses");
    expect(request?.headers.authorization).toBe("Bearer test-openai-key");
    expect(request?.body.prompt_cache_key).toBe("pod-42");
    expect(request?.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["read_file", "list_dir"]);
    expect(JSON.stringify(request?.body)).toContain(JSON.stringify(systemPrompt));
  });

  it("keeps the OpenAI Chat message order and the include_usage stream option", async () => {
    const double = await startDouble({ wire: "openai-chat", responses: [reply] });
    const call = basicCall({
      prompt: [
        { role: "system", content: systemPrompt },
        { role: "user", content: [{ type: "text", text: "one" }] },
        { role: "assistant", content: [{ type: "text", text: "two" }] },
        { role: "user", content: [{ type: "text", text: "three" }] },
      ],
      providerOptions: { openai: { promptCacheKey: "pod-7" } },
    });
    await collect((await modelFor("openai-chat", double.baseUrl).doStream(call)).stream);
    const body = double.requests[0]?.body;
    expect(body.messages.map((message: { role: string }) => message.role)).toEqual([
      "developer", // the OpenAI client sends a reasoning model's (gpt-5) system prompt as a developer message
      "user",
      "assistant",
      "user",
    ]);
    expect(body.messages[0].content).toBe(systemPrompt);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.prompt_cache_key).toBe("pod-7");
  });

  it("keeps the Gemini model path, API key header, system instruction and function declaration order", async () => {
    const double = await startDouble({ wire: "google", responses: [reply] });
    const call = basicCall({
      prompt: [
        { role: "system", content: systemPrompt },
        { role: "user", content: [{ type: "text", text: "hi" }] },
      ],
    });
    await collect((await modelFor("google", double.baseUrl).doStream(call)).stream);
    const [request] = double.requests;
    expect(request?.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    expect(request?.url).toBe(
      `${double.origin}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
    );
    expect(request?.headers["x-goog-api-key"]).toBe("test-google-key");
    expect(request?.body.systemInstruction).toEqual({ parts: [{ text: systemPrompt }] });
    expect(request?.body.tools[0].functionDeclarations.map((tool: { name: string }) => tool.name)).toEqual([
      "read_file",
      "list_dir",
    ]);
  });

  it("stamps requests with the injected clock", async () => {
    const double = await startDouble({ wire: "anthropic", responses: [reply], now: () => 1_700_000_000_000 });
    await collect((await modelFor("anthropic", double.baseUrl).doStream(basicCall())).stream);
    expect(double.requests[0]?.receivedAt).toBe(1_700_000_000_000);
  });
});

describe("the response queue", () => {
  it("answers a request beyond the script with HTTP 500 naming the empty queue", async () => {
    const double = await startDouble({ wire: "openai-chat", responses: [reply] });
    const model = modelFor("openai-chat", double.baseUrl);
    await collect((await model.doStream(basicCall())).stream);
    expect(double.pending()).toBe(0);
    const error = await model.doStream(basicCall()).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(500);
    expect((error as APICallError).message).toBe(NO_RESPONSE_LEFT);
    expect(double.requests).toHaveLength(2);
  });

  it("serves responses in order and counts what is pending", async () => {
    const double = await startDouble({ wire: "google" });
    double.enqueue({ parts: [{ type: "text", text: "one" }] }, { parts: [{ type: "text", text: "two" }] });
    expect(double.pending()).toBe(2);
    const model = modelFor("google", double.baseUrl);
    expect((await collect((await model.doStream(basicCall())).stream)).text).toBe("one");
    expect(double.pending()).toBe(1);
    expect((await collect((await model.doStream(basicCall())).stream)).text).toBe("two");
    expect(double.pending()).toBe(0);
  });

  it("replays the queue cyclically in loop mode", async () => {
    const double = await startDouble({
      wire: "anthropic",
      loop: true,
      responses: [{ parts: [{ type: "text", text: "A" }] }, { parts: [{ type: "text", text: "B" }] }],
    });
    const model = modelFor("anthropic", double.baseUrl);
    const texts: string[] = [];
    for (let i = 0; i < 5; i++) texts.push((await collect((await model.doStream(basicCall())).stream)).text);
    expect(texts).toEqual(["A", "B", "A", "B", "A"]);
    expect(double.pending()).toBe(2);
  });

  it("answers a request to the wrong endpoint with 404 naming the expected one, without using the queue", async () => {
    const double = await startDouble({ wire: "anthropic", responses: [reply] });
    const response = await fetch(`${double.origin}/v1/chat/completions`, { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      "provider double (anthropic): expected POST <baseUrl>/messages, got POST /v1/chat/completions",
    );
    expect(double.pending()).toBe(1);
    expect(double.requests[0]?.body).toEqual({});
  });

  it("refuses a non-streaming request with 400", async () => {
    const double = await startDouble({ wire: "openai-responses", responses: [reply] });
    const response = await fetch(`${double.baseUrl}/responses`, {
      method: "POST",
      body: JSON.stringify({ model: "m", input: "hi" }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      "only streaming requests are served",
    );
  });

  it("rejects a malformed script at enqueue time, naming the response and field", async () => {
    const double = await startDouble({ wire: "anthropic" });
    expect(() => double.enqueue(reply, { parts: [{ type: "text", text: "x", chunkSize: 0 }] })).toThrow(
      "anthropic script part 0 (text): chunkSize must be a positive integer, got 0",
    );
    expect(() => double.enqueue({ parts: [{ type: "image" } as never] })).toThrow(
      'scripted response #1.parts[0].type must be one of text, reasoning, redacted_reasoning, tool_call, server_tool_call, server_tool_result, compaction, error, raw, got "image"',
    );
    expect(() => double.enqueue({ parts: [], fault: { kind: "reset", afterEvents: -1 } })).toThrow(
      "scripted response #1.fault.afterEvents must be a non-negative integer, got -1",
    );
    expect(() => double.enqueue({ fault: { kind: "status", status: 200 } })).toThrow(TestkitError);
    expect(double.pending()).toBe(0);
  });

  it("rejects a bad script given at start without leaving a server listening", async () => {
    await expect(
      startDouble({ wire: "google", responses: [{ parts: [{ type: "text", text: "x", chunkSize: 1.5 }] }] }),
    ).rejects.toThrow("google script part 0 (text): chunkSize must be a positive integer, got 1.5");
  });

  it("names the address when the port is taken", async () => {
    const first = await startDouble({ wire: "anthropic" });
    const port = Number(new URL(first.origin).port);
    await expect(startDouble({ wire: "anthropic", port })).rejects.toThrow(
      `provider double cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port} (pass port: 0 for a free port)`,
    );
  });

  it("rejects an unknown wire", async () => {
    await expect(startDouble({ wire: "cohere" as never })).rejects.toThrow(
      'startProviderDouble: wire must be one of anthropic, openai-chat, openai-responses, google, got "cohere"',
    );
  });
});
