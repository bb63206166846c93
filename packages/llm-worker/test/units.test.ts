import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_POLICY, ItemSchema, RequestConfigSchema } from "../src/index.js";
import { isRetryableStatus } from "../src/retry/classify-error.js";
import { backoffDelay, retryAfterMs } from "../src/retry/retry-policy.js";
import { capToolOutput } from "../src/tools/cap-output.js";

describe("capToolOutput", () => {
  it("returns text within the cap unchanged", () => {
    expect(capToolOutput("short", 5)).toBe("short");
  });

  it("never splits a multi-byte character, says how much was shown, and keeps the notice within the cap", () => {
    const text = "😀".repeat(50); // 200 bytes
    for (const cap of [90, 91, 92, 93, 120]) {
      const capped = capToolOutput(text, cap);
      expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(cap);
      const [kept, notice] = capped.split("\n");
      expect(kept).toBe("😀".repeat((kept ?? "").length / 2));
      expect(notice).toBe(
        `[output truncated: showing ${Buffer.byteLength(kept ?? "")} of 200 bytes; narrow the request to see the rest]`,
      );
    }
  });

  it("only cuts when the cap is too small for the notice", () => {
    expect(capToolOutput("a😀b and more", 5)).toBe("a😀");
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
});
