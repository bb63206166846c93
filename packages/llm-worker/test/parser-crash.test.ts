import { describe, expect, it } from "vitest";
import { MalformedResponseError } from "../src/index.js";
import { toProviderError } from "../src/retry/classify-error.js";
import { startDouble, workerFor } from "./helpers.js";

describe("a provider parser crash", () => {
  it("openai-responses: an event for a reasoning item that never opened fails fast as MalformedResponseError", async () => {
    const double = await startDouble("openai-responses");
    // What a proxy that dropped `response.output_item.added` produced on a real stream.
    const orphan = {
      type: "response.reasoning_summary_part.added",
      item_id: "rs_dropped",
      output_index: 1,
      summary_index: 1,
      part: { type: "summary_text", text: "" },
    };
    double.enqueue(
      {
        parts: [
          { type: "text", text: "Partial" },
          { type: "raw", event: orphan.type, data: orphan },
        ],
      },
      { parts: [{ type: "text", text: "must not be requested" }] },
    );
    const { worker, persisted } = workerFor(double);

    const error = await worker.run("hi").catch((e: unknown) => e);

    expect(MalformedResponseError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ provider: "openai", kind: "malformed", isRetryable: false });
    expect((error as MalformedResponseError).part).toBe('the field "summaryParts" after a text-end part');
    expect((error as Error).message).toMatch(/^openai sent a response its parser could not read/);
    // Not taken for a broken connection: no retry, no continuation, nothing committed.
    expect(double.requests).toHaveLength(1);
    expect(persisted.map((item) => item.type)).toEqual(["message"]);
  });
});

describe("which failures are broken connections", () => {
  it("only undici network failures with a network cause code are connection errors", () => {
    const reset = new TypeError("terminated", {
      cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
    });
    const refused = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    });
    expect(toProviderError(reset, "anthropic")).toMatchObject({ kind: "connection", isRetryable: true });
    expect(toProviderError(refused, "anthropic")).toMatchObject({ kind: "connection", isRetryable: true });

    const crash = new TypeError("Cannot read properties of undefined (reading 'summaryParts')");
    const noCause = new TypeError("fetch failed");
    expect(MalformedResponseError.isInstance(toProviderError(crash, "openai", 1, "reasoning-delta"))).toBe(
      true,
    );
    expect(toProviderError(crash, "openai", 1, "reasoning-delta")).toMatchObject({
      part: 'the field "summaryParts" after a reasoning-delta part',
      isRetryable: false,
    });
    expect(toProviderError(noCause, "openai").kind).toBe("malformed");
  });
});
