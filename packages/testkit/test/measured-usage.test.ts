import { describe, expect, it } from "vitest";
import { simulatePromptCache } from "../src/index.js";
import { collect, type StreamSummary } from "./support/collect.js";
import { useDoubles } from "./support/doubles.js";
import { basicCall, modelFor } from "./support/models.js";

const startDouble = useDoubles();
const reply = { parts: [{ type: "text" as const, text: "ok" }] };

function callWith(text: string) {
  return basicCall({ prompt: [{ role: "user", content: [{ type: "text", text }] }] });
}

const inputTokensOf = (summary: StreamSummary) => summary.finish?.usage.inputTokens.total;

describe("measureInputTokens", () => {
  it("reports each request's own prompt size as input tokens when a response scripts no usage", async () => {
    const double = await startDouble({
      wire: "anthropic",
      responses: [reply, reply],
      measureInputTokens: true,
    });
    const model = modelFor("anthropic", double.baseUrl);
    const small = inputTokensOf(await collect((await model.doStream(callWith("short"))).stream));
    const large = inputTokensOf(await collect((await model.doStream(callWith("x".repeat(8000)))).stream));
    const expected = simulatePromptCache(double.requests, "anthropic").requests.map((r) => r.inputTokens);
    expect([small, large]).toEqual(expected);
    expect((large ?? 0) - (small ?? 0)).toBe(Math.ceil((8000 - "short".length) / 4));
  });

  it("keeps scripted usage, and the fixed default without the option", async () => {
    const scripted = { ...reply, usage: { inputTokens: 77, outputTokens: 1 } };
    const measuring = await startDouble({
      wire: "anthropic",
      responses: [scripted],
      measureInputTokens: true,
    });
    const plain = await startDouble({ wire: "anthropic", responses: [reply] });
    const big = callWith("x".repeat(8000));
    expect(
      inputTokensOf(await collect((await modelFor("anthropic", measuring.baseUrl).doStream(big)).stream)),
    ).toBe(77);
    expect(
      inputTokensOf(await collect((await modelFor("anthropic", plain.baseUrl).doStream(big)).stream)),
    ).toBe(10);
  });
});

describe("respond", () => {
  it("answers from the request's content first and falls through to the queue on undefined", async () => {
    const double = await startDouble({
      wire: "anthropic",
      responses: [{ parts: [{ type: "text", text: "queued" }] }],
      respond: (request) =>
        JSON.stringify(request.body.messages).includes("route me")
          ? { parts: [{ type: "text", text: "routed" }] }
          : undefined,
    });
    const model = modelFor("anthropic", double.baseUrl);
    const routed = await collect((await model.doStream(callWith("please route me"))).stream);
    const queued = await collect((await model.doStream(callWith("plain"))).stream);
    expect([routed.text, queued.text]).toEqual(["routed", "queued"]);
    expect(double.pending()).toBe(0);
  });
});
