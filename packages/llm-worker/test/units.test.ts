import { describe, expect, it } from "vitest";
import {
  backoffDelay,
  capToolOutput,
  DEFAULT_RETRY_POLICY,
  ItemSchema,
  isRetryableStatus,
  LlmWorkerError,
  ProviderError,
  RequestConfigSchema,
  retryAfterMs,
} from "../src/index.js";

describe("capToolOutput", () => {
  it("returns text within the cap unchanged", () => {
    expect(capToolOutput("short", 5)).toBe("short");
  });

  it("never splits a multi-byte character and says how much was shown", () => {
    const text = "a😀b"; // 1 + 4 + 1 bytes
    for (const cap of [1, 2, 3, 4])
      expect(capToolOutput(text, cap).startsWith("a\n[output truncated: showing 1 of 6")).toBe(true);
    expect(capToolOutput(text, 5).startsWith("a😀\n[output truncated: showing 5 of 6")).toBe(true);
  });
});

describe("retry timing", () => {
  it("reads retry-after-ms, seconds and HTTP dates", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    expect(retryAfterMs({ "retry-after-ms": "250" }, now)).toBe(250);
    expect(retryAfterMs({ "Retry-After": "3" }, now)).toBe(3000);
    expect(retryAfterMs({ "retry-after": "Tue, 01 Jan 2030 00:00:05 GMT" }, now)).toBe(5000);
    expect(retryAfterMs({ "retry-after": "Mon, 31 Dec 2029 00:00:00 GMT" }, now)).toBe(0);
    expect(retryAfterMs({ "retry-after": "soon" }, now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  it("draws full-jitter delays under an exponentially growing, capped ceiling", () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.999 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoffDelay({ ...policy, random: () => 0 }, 4)).toBe(0);
  });

  it("treats 408/409/425/429/5xx/529 as retryable and other 4xx as not", () => {
    expect([408, 409, 425, 429, 500, 503, 529].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 422].some(isRetryableStatus)).toBe(false);
  });
});

describe("items and config schemas", () => {
  it("parses every item kind with provider metadata and rejects an unknown type", () => {
    const items = [
      { type: "message", role: "system", content: [{ type: "text", text: "note" }] },
      { type: "reasoning", text: "", provider_metadata: { anthropic: { redactedData: "x" } } },
      {
        type: "tool_call",
        call_id: "c1",
        name: "t",
        arguments: "{}",
        provider_metadata: { google: { thoughtSignature: "s" } },
      },
      { type: "tool_result", call_id: "c1", summary: "ok", content: "full", is_error: false },
    ];
    for (const item of items) expect(ItemSchema.parse(item)).toEqual(item);
    expect(ItemSchema.safeParse({ type: "image" }).success).toBe(false);
  });

  it("rejects unknown request config keys", () => {
    expect(RequestConfigSchema.safeParse({ max_tokens: 10, reasoning: "high" }).success).toBe(true);
    expect(RequestConfigSchema.safeParse({ maxTokens: 10 }).success).toBe(false);
  });

  it("recognises errors of this package across copies through the Symbol.for marker", () => {
    const foreign = Object.assign(new Error("x"), {
      name: "ProviderError",
      [Symbol.for("podkit.llm-worker.error")]: true,
    });
    expect(LlmWorkerError.isInstance(foreign)).toBe(true);
    expect(ProviderError.isInstance(foreign)).toBe(true);
    expect(LlmWorkerError.isInstance(new Error("plain"))).toBe(false);
  });
});
