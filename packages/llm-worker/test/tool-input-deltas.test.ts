import type { Wire } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import type { Item, WorkerEvent } from "../src/index.js";
import { recordingTool, startDouble, toolServer, WIRES, workerFor } from "./helpers.js";

// `tool_input_delta`: a client tool call's arguments as they stream (docs/llm-worker.md), the feed
// of a pod's partial typed answers.

type InputDelta = Extract<WorkerEvent, { type: "tool_input_delta" }>;

describe.each(WIRES)("%s wire: tool_input_delta", (wire: Wire) => {
  it("streams a call's argument text in order, ahead of its start, adding up to its arguments", async () => {
    const double = await startDouble(wire);
    const echo = recordingTool("echo");
    const text = "a longer argument, so that it arrives in several pieces";
    double.enqueue(
      { parts: [{ type: "tool_call", name: "echo", arguments: { text }, chunkSize: 7 }] },
      { parts: [{ type: "text", text: "done" }] },
    );
    const { worker, persisted, events } = workerFor(double, { tools: toolServer(echo.tool) });

    await worker.run("Use the tool.");

    const call = persisted.find((item) => item.type === "tool_call") as Extract<Item, { type: "tool_call" }>;
    const deltas = events.filter((e): e is InputDelta => e.type === "tool_input_delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.callId === call.call_id && d.name === "echo")).toBe(true);
    expect(deltas.map((d) => d.delta).join("")).toBe(call.arguments);
    // Every piece came before the call started running.
    const started = events.findIndex((e) => e.type === "tool_call_start");
    expect(events.findLastIndex((e) => e.type === "tool_input_delta")).toBeLessThan(started);
  });

  it("arguments the provider sends whole come as one piece", async () => {
    const double = await startDouble(wire);
    const echo = recordingTool("echo");
    double.enqueue(
      { parts: [{ type: "tool_call", name: "echo", arguments: { text: "whole" } }] },
      { parts: [{ type: "text", text: "done" }] },
    );
    const { worker, events } = workerFor(double, { tools: toolServer(echo.tool) });
    await worker.run("Use the tool.");
    const deltas = events.filter((e): e is InputDelta => e.type === "tool_input_delta");
    expect(deltas.map((d) => d.delta)).toEqual([JSON.stringify({ text: "whole" })]);
  });
});

it("a text answer sends none", async () => {
  const double = await startDouble("anthropic");
  double.enqueue({ parts: [{ type: "text", text: "no tools today", chunkSize: 3 }] });
  const { worker, events } = workerFor(double);
  await worker.run("Say something.");
  expect(events.some((e) => e.type === "text_delta")).toBe(true);
  expect(events.some((e) => e.type === "tool_input_delta")).toBe(false);
});
