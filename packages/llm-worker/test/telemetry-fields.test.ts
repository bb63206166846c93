import { describe, expect, it } from "vitest";
import type { Tool, WorkerEvent } from "../src/index.js";
import { REFS, startDouble, toolServer, WIRES, workerFor } from "./helpers.js";

// The fields telemetry reads from worker events: the provider's response model and id on
// `request_end`, and the exception a tool threw on `tool_call_end`.

function ofType<T extends WorkerEvent["type"]>(events: WorkerEvent[], type: T) {
  return events.filter((event): event is Extract<WorkerEvent, { type: T }> => event.type === type);
}

class LedgerLockedError extends Error {
  override name = "LedgerLockedError";
}

describe("worker events for telemetry", () => {
  it.each(WIRES)(
    "%s: request_end carries the model and response id the provider reported (undefined when it reported none)",
    async (wire) => {
      const double = await startDouble(wire);
      double.enqueue({ id: "resp_fixed_1", parts: [{ type: "text", text: "hi" }] });
      const { worker, events } = workerFor(double);
      await worker.run("hello");
      const [end] = ofType(events, "request_end");
      // The AI SDK's Gemini provider reports the response id only, never the model.
      expect(end?.responseModel).toBe(wire === "google" ? undefined : REFS[wire].split("/")[1]);
      expect(end?.responseId).toBe("resp_fixed_1");
    },
  );

  it("tool_call_end carries what a tool threw; an error result it returned carries none", async () => {
    const double = await startDouble("anthropic");
    const throwing: Tool = {
      name: "post_entry",
      description: "posts a ledger entry",
      inputSchema: { type: "object", properties: {} },
      execute: () => {
        throw new LedgerLockedError("the ledger is locked");
      },
    };
    const refusing: Tool = {
      name: "close_books",
      description: "closes the books",
      inputSchema: { type: "object", properties: {} },
      execute: () => ({ summary: "not at month end", is_error: true }),
    };
    double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_1", name: "post_entry", arguments: {} },
          { type: "tool_call", id: "toolu_2", name: "close_books", arguments: {} },
        ],
      },
      { parts: [{ type: "text", text: "both failed" }] },
    );
    const { worker, events } = workerFor(double, { tools: toolServer(throwing, refusing) });
    await worker.run("do the books");
    const ends = Object.fromEntries(ofType(events, "tool_call_end").map((end) => [end.name, end]));
    expect(ends.post_entry?.isError).toBe(true);
    expect(ends.post_entry?.error).toBeInstanceOf(LedgerLockedError);
    expect(ends.close_books?.isError).toBe(true);
    expect(ends.close_books?.error).toBeUndefined();
    // The model still sees only the summary.
    expect(JSON.stringify(double.requests[1]?.body)).toContain("the ledger is locked");
  });
});
