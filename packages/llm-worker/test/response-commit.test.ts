import { describe, expect, it } from "vitest";
import { HistoryAppendError, type ResponseCommit, type Worker } from "../src/index.js";
import { recordingTool, startDouble, toolServer, workerFor } from "./helpers.js";

/** What the worker showed when each `onResponseCommit` call came: its history length and events so far. */
interface Seen {
  readonly commit: ResponseCommit;
  readonly historyLength: number;
  readonly events: readonly string[];
}

describe("onResponseCommit: one call per model response", () => {
  it("hands over a response's usage and items together, before any of them is used or reported", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    double.enqueue(
      {
        parts: [
          { type: "text", text: "Let me echo." },
          { type: "tool_call", id: "toolu_1", name: "echo", arguments: { text: "x" } },
        ],
        usage: { inputTokens: 1000, outputTokens: 20 },
      },
      { parts: [{ type: "text", text: "done" }], usage: { inputTokens: 1100, outputTokens: 5 } },
    );
    const seen: Seen[] = [];
    let worker: Worker | undefined;
    const built = workerFor(double, {
      tools: toolServer(echo.tool),
      onUsage: () => {
        throw new Error("onUsage is not called when onResponseCommit is given");
      },
      onResponseCommit: (commit) => {
        seen.push({
          commit: structuredClone(commit),
          historyLength: worker?.history.length ?? -1,
          events: built.events.map((event) => event.type),
        });
      },
    });
    worker = built.worker;

    await worker.run("go");

    expect(
      seen.map(({ commit }) => [commit.usage?.inputTokens, commit.items.map((item) => item.type)]),
    ).toEqual([
      [1000, ["message", "tool_call"]],
      [1100, ["message"]],
    ]);
    // Nothing of the first response was in history, reported, or run when it was handed over.
    expect(seen[0]?.historyLength).toBe(1);
    expect(
      seen[0]?.events.filter((type) => ["usage", "item_committed", "tool_call_start"].includes(type)),
    ).toEqual(
      ["item_committed"], // the user's message only
    );
    // The tool result still goes through onHistoryAppend, once the call was persisted and ran.
    expect(built.persisted.map((item) => item.type)).toEqual(["message", "tool_result"]);
    expect(worker.history.map((item) => item.type)).toEqual([
      "message",
      "message",
      "tool_call",
      "tool_result",
      "message",
    ]);
    const order = built.events
      .map((event) => event.type)
      .filter((type) => type === "usage" || type === "item_committed");
    expect(order).toEqual([
      "item_committed",
      "usage",
      "item_committed",
      "item_committed",
      "item_committed",
      "usage",
      "item_committed",
    ]);
  });

  it("a failing onResponseCommit stops the turn: nothing of the response is used and its tool call never runs", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    double.enqueue({
      parts: [
        { type: "text", text: "Let me echo." },
        { type: "tool_call", name: "echo", arguments: { text: "x" } },
      ],
    });
    const { worker, events } = workerFor(double, {
      tools: toolServer(echo.tool),
      onResponseCommit: () => {
        throw new Error("disk full");
      },
    });

    const error = await worker.run("go").catch((e: unknown) => e);

    expect(HistoryAppendError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/could not persist a message item.*disk full/);
    expect(echo.calls).toEqual([]);
    expect(worker.history.map((item) => item.type)).toEqual(["message"]);
    expect(events.some((event) => event.type === "usage")).toBe(false);
  });
});
