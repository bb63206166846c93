import { describe, expect, it } from "vitest";
import type { CapturedRequest } from "../types.js";
import { canonicalJson } from "./canonical.js";
import { simulatePromptCache } from "./simulate-prompt-cache.js";

// Every expectation below is computed by hand from the canonical serialization (sorted keys, no
// cache_control): tokens = ceil(bytes / 4) for what is billed, floor(bytes / 4) for a shared prefix.

function captured(body: unknown, path = "/v1/messages"): CapturedRequest {
  return {
    method: "POST",
    path,
    url: `http://127.0.0.1${path}`,
    headers: {},
    body,
    rawBody: "",
    receivedAt: 0,
  };
}

const bp = { type: "ephemeral" };

describe("anthropic breakpoint caching", () => {
  // Each block below serializes to exactly 400 bytes = 100 tokens:
  // {"system":{"text":<364 chars>,"type":"text"}}, {"content":{"text":<349 chars>,"type":"text"},"role":"user"},
  // {"content":{"text":<344 chars>,"type":"text"},"role":"assistant"}, {"tool":{"description":<361 chars>,"name":"t1"}}.
  const system = (c: string, breakpoint = true) => [
    { type: "text", text: c.repeat(364), ...(breakpoint ? { cache_control: bp } : {}) },
  ];
  const user = (c: string, breakpoint = false) => ({
    role: "user",
    content: [{ type: "text", text: c.repeat(349), ...(breakpoint ? { cache_control: bp } : {}) }],
  });
  const assistant = (c: string) => ({ role: "assistant", content: [{ type: "text", text: c.repeat(344) }] });
  const tool = (name: string, breakpoint = false) => ({
    name,
    description: "d".repeat(361),
    ...(breakpoint ? { cache_control: bp } : {}),
  });
  const request = (body: Record<string, unknown>) => captured({ model: "claude", ...body });

  it("writes each breakpoint's prefix on first sight and reads it back when unchanged", () => {
    // blocks: system(bp) 100 | user b(bp) 100 | assistant c 100 | user d 100 -> 400 tokens, last breakpoint after 200.
    const turn = request({ system: system("a"), messages: [user("b", true), assistant("c"), user("d")] });
    const report = simulatePromptCache([turn, turn], "anthropic");
    expect(report.requests).toEqual([
      { inputTokens: 400, cacheReadTokens: 0, cacheWriteTokens: 200, uncachedTokens: 200 },
      { inputTokens: 400, cacheReadTokens: 200, cacheWriteTokens: 0, uncachedTokens: 200 },
    ]);
    expect(report.totals).toEqual({
      inputTokens: 800,
      cacheReadTokens: 200,
      cacheWriteTokens: 200,
      uncachedTokens: 400,
    });
    expect(report.cachedShare).toBe(0.25);
  });

  it("a change in the middle invalidates every prefix after it", () => {
    const first = request({ system: system("a"), messages: [user("b", true), assistant("c"), user("d")] });
    const changedMessage = request({
      system: system("a"),
      messages: [user("x", true), assistant("c"), user("d")],
    });
    const changedSystem = request({
      system: system("z"),
      messages: [user("b", true), assistant("c"), user("d")],
    });
    const report = simulatePromptCache([first, changedMessage, changedSystem], "anthropic");
    // The system prefix (100) survives a changed first message; a changed system prompt leaves nothing.
    expect(report.requests[1]).toEqual({
      inputTokens: 400,
      cacheReadTokens: 100,
      cacheWriteTokens: 100,
      uncachedTokens: 200,
    });
    expect(report.requests[2]).toEqual({
      inputTokens: 400,
      cacheReadTokens: 0,
      cacheWriteTokens: 200,
      uncachedTokens: 200,
    });
  });

  it("a breakpoint moved forward reads the earlier prefix found within 20 blocks before it", () => {
    const first = request({ system: system("a"), messages: [user("b", true)] });
    // Next turn: only the newest message carries a breakpoint (index 3); the prefix through index 1 was written.
    const next = request({
      system: system("a", false),
      messages: [user("b"), assistant("c"), user("d", true)],
    });
    const report = simulatePromptCache([first, next], "anthropic");
    expect(report.requests[0]).toEqual({
      inputTokens: 200,
      cacheReadTokens: 0,
      cacheWriteTokens: 200,
      uncachedTokens: 0,
    });
    expect(report.requests[1]).toEqual({
      inputTokens: 400,
      cacheReadTokens: 200,
      cacheWriteTokens: 200,
      uncachedTokens: 0,
    });
  });

  it("the lookback reaches exactly 20 blocks before a breakpoint, not 21", () => {
    const first = request({ system: system("a"), messages: [user("b")] });
    // 1 system block + n messages; the only breakpoint is on the last block n, n blocks after the written block 0.
    const later = (n: number) => {
      const messages = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? user("b") : assistant("c")));
      messages[n - 1] = user("e", true);
      return request({ system: system("a", false), messages });
    };
    expect(simulatePromptCache([first, later(20)], "anthropic").requests[1]).toEqual({
      inputTokens: 2100,
      cacheReadTokens: 100,
      cacheWriteTokens: 2000,
      uncachedTokens: 0,
    });
    expect(simulatePromptCache([first, later(21)], "anthropic").requests[1]).toEqual({
      inputTokens: 2200,
      cacheReadTokens: 0,
      cacheWriteTokens: 2200,
      uncachedTokens: 0,
    });
  });

  it("without breakpoints nothing is cached", () => {
    const plain = request({ system: system("a", false), messages: [user("b")] });
    expect(simulatePromptCache([plain, plain], "anthropic").requests[1]).toEqual({
      inputTokens: 200,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      uncachedTokens: 200,
    });
  });

  it("tools come first in the prefix, so reordering them invalidates the cache", () => {
    // blocks: tool t1 100 | tool t2(bp) 100 | system 100 | user(bp) 100.
    const first = request({
      tools: [tool("t1"), tool("t2", true)],
      system: system("a", false),
      messages: [user("b", true)],
    });
    const newQuestion = request({
      tools: [tool("t1"), tool("t2", true)],
      system: system("a", false),
      messages: [user("q", true)],
    });
    const reordered = request({
      tools: [tool("t2", true), tool("t1")],
      system: system("a", false),
      messages: [user("b", true)],
    });
    const report = simulatePromptCache([first, newQuestion, reordered], "anthropic");
    expect(report.requests[0]).toEqual({
      inputTokens: 400,
      cacheReadTokens: 0,
      cacheWriteTokens: 400,
      uncachedTokens: 0,
    });
    expect(report.requests[1]).toEqual({
      inputTokens: 400,
      cacheReadTokens: 200,
      cacheWriteTokens: 200,
      uncachedTokens: 0,
    });
    expect(report.requests[2]).toEqual({
      inputTokens: 400,
      cacheReadTokens: 0,
      cacheWriteTokens: 400,
      uncachedTokens: 0,
    });
  });

  it("caches are per model", () => {
    const turn = (model: string) => captured({ model, system: system("a"), messages: [user("b")] });
    expect(
      simulatePromptCache([turn("claude-a"), turn("claude-b")], "anthropic").requests[1]?.cacheReadTokens,
    ).toBe(0);
  });
});

describe("automatic prefix caching (openai)", () => {
  // A chat message {"content":<n chars>,"role":"user"} serializes to 28 + n bytes ("system": 30 + n).
  const message = (role: "system" | "user", c: string, bytes: number) => ({
    role,
    content: c.repeat(bytes - (role === "system" ? 30 : 28)),
  });
  const chat = (messages: unknown[], extra: Record<string, unknown> = {}) =>
    captured({ model: "gpt", messages, ...extra }, "/v1/chat/completions");

  it("counts the common prefix rounded down to 128-token steps", () => {
    const system = message("system", "s", 5200);
    const first = chat([system, message("user", "x", 400)]);
    const second = chat([system, message("user", "y", 400)]);
    // Shared: 5200 bytes + 12 bytes of '{"content":"' = 5212 bytes = 1303 tokens -> 1280 (10 x 128).
    expect(simulatePromptCache([first, second], "openai-chat").requests).toEqual([
      { inputTokens: 1400, cacheReadTokens: 0, cacheWriteTokens: 0, uncachedTokens: 1400 },
      { inputTokens: 1400, cacheReadTokens: 1280, cacheWriteTokens: 0, uncachedTokens: 120 },
    ]);
  });

  it("caches nothing below 1024 shared tokens and exactly 1024 at the threshold", () => {
    const below = message("system", "s", 4092); // 1023 tokens
    const at = message("system", "t", 4096); // 1024 tokens
    const report = simulatePromptCache(
      [
        chat([below]),
        chat([below, message("user", "q", 400)]),
        chat([at]),
        chat([at, message("user", "q", 400)]),
      ],
      "openai-chat",
    );
    expect(report.requests.map((request) => request.cacheReadTokens)).toEqual([0, 0, 0, 1024]);
    expect(report.requests[3]).toEqual({
      inputTokens: 1124,
      cacheReadTokens: 1024,
      cacheWriteTokens: 0,
      uncachedTokens: 100,
    });
  });

  it("a change in the middle invalidates everything after it, even identical later messages", () => {
    const a = message("system", "a", 8192); // 2048 tokens
    const tail = message("user", "t", 400);
    const first = chat([a, message("user", "b", 2048), tail]);
    const second = chat([a, message("user", "c", 2048), tail]);
    // Shared: 8192 + 12 bytes = 8204 bytes = 2051 tokens -> 2048.
    expect(simulatePromptCache([first, second], "openai-chat").requests[1]?.cacheReadTokens).toBe(2048);
  });

  it("uses the longest prefix shared with any earlier request", () => {
    const a = message("system", "a", 8192);
    const report = simulatePromptCache(
      [
        chat([a, message("user", "q", 400)]),
        chat([message("system", "z", 8192)]),
        chat([a, message("user", "q", 400)]),
      ],
      "openai-chat",
    );
    // The third request repeats the first entirely: 8592 bytes = 2148 tokens -> 2048.
    expect(report.requests[2]).toEqual({
      inputTokens: 2148,
      cacheReadTokens: 2048,
      cacheWriteTokens: 0,
      uncachedTokens: 100,
    });
  });

  it("requests with different prompt_cache_key values do not share a cache", () => {
    const system = message("system", "s", 5200);
    const keyed = (key: string) => chat([system], { prompt_cache_key: key });
    const report = simulatePromptCache([keyed("pod-a"), keyed("pod-b"), keyed("pod-a")], "openai-chat");
    expect(report.requests.map((request) => request.cacheReadTokens)).toEqual([0, 0, 1280]);
  });

  it("reads the Responses API's instructions and input as the prompt", () => {
    // {"instructions":<4589 chars>} = 4608 bytes; the input items differ after '{"content":"' (12 bytes).
    const turn = (question: string) =>
      captured(
        { model: "gpt", instructions: "i".repeat(4589), input: [{ role: "user", content: question }] },
        "/v1/responses",
      );
    const report = simulatePromptCache([turn("first"), turn("second")], "openai-responses");
    // 4620 shared bytes = 1155 tokens -> 1152 (9 x 128).
    expect(report.requests[1]?.cacheReadTokens).toBe(1152);
  });
});

describe("implicit caching (gemini, same rule as openai)", () => {
  it("reads system instruction and contents as the prompt, scoped by the model in the path", () => {
    // {"systemInstruction":{"parts":[{"text":<4051 chars>}]}} = 4096 bytes; contents differ after 19 bytes.
    const turn = (model: string, question: string) =>
      captured(
        {
          systemInstruction: { parts: [{ text: "g".repeat(4051) }] },
          contents: [{ role: "user", parts: [{ text: question }] }],
        },
        `/v1beta/models/${model}:streamGenerateContent`,
      );
    const report = simulatePromptCache(
      [turn("gemini-a", "one"), turn("gemini-a", "two"), turn("gemini-b", "two")],
      "google",
    );
    // 4115 shared bytes = 1028 tokens -> 1024; another model shares nothing.
    expect(report.requests.map((request) => request.cacheReadTokens)).toEqual([0, 1024, 0]);
    expect(report.requests.every((request) => request.cacheWriteTokens === 0)).toBe(true);
  });
});

describe("canonical serialization", () => {
  it("ignores key order and cache_control markers", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], cache_control: bp } })).toBe(
      '{"a":{"d":[1,{"e":3,"f":2}]},"b":1}',
    );
  });

  it("a request without a JSON body counts as an empty prompt", () => {
    const report = simulatePromptCache([captured(undefined)], "anthropic");
    expect(report.requests).toEqual([
      { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, uncachedTokens: 0 },
    ]);
    expect(report.cachedShare).toBe(0);
  });
});
