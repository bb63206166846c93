import type { ProviderDoubleOptions, ScriptedResponse } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import type { PodEvent } from "../src/index.js";
import { testTools, toolCall, usePodWorlds } from "./pod-harness.js";

// The typed answer as it streams (docs/output.md, "Streaming"): `output_partial` events on the
// pod's event stream, read from the `final_answer` call's arguments chunk by chunk.

const world = usePodWorlds();

const SCHEMA = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["approve", "reject"] },
    findings: {
      type: "array",
      items: {
        type: "object",
        properties: { line: { type: "integer" }, note: { type: "string" } },
        required: ["line", "note"],
      },
    },
  },
  required: ["verdict", "findings"],
};

const ANSWER = {
  verdict: "reject",
  findings: [
    { line: 12, note: "a note, with [brackets] and {braces}" },
    { line: 40, note: "second" },
    { line: 77, note: "third" },
  ],
};

const WIRES: ProviderDoubleOptions["wire"][] = ["anthropic", "openai-responses", "openai-chat", "google"];

type Partial = Extract<PodEvent, { type: "output_partial" }>;

async function typedPod(wire: ProviderDoubleOptions["wire"]) {
  const w = await world({
    manifestExtra: `[output]\nschema = "answer.schema.json"\n`,
    files: { "project/.podkit/answer.schema.json": JSON.stringify(SCHEMA) },
    toolPackages: [testTools({ lint: () => "clean" })],
    double: { wire },
  });
  return { w, pod: await w.pod() };
}

const streamedAnswer = (args: unknown, chunkSize?: number): ScriptedResponse => ({
  parts: [
    {
      type: "tool_call",
      id: "call_final",
      name: "final_answer",
      arguments: args as Record<string, unknown>,
      ...(chunkSize === undefined ? {} : { chunkSize }),
    },
  ],
});

/** Runs `input` and returns the run's events, in the order the handle gave them, and its result. */
async function runCollecting(pod: Awaited<ReturnType<typeof typedPod>>["pod"], input: string) {
  const run = pod.run(input);
  const events: PodEvent[] = [];
  for await (const event of run) events.push(event);
  return { events, result: await run };
}

describe("output_partial events", () => {
  for (const wire of WIRES) {
    it(`on the ${wire} wire: partials arrive in order, each array element once, and the last is the answer`, async () => {
      const { w, pod } = await typedPod(wire);
      w.double.enqueue(toolCall("lint", {}, "call_lint"), streamedAnswer(ANSWER, 9));
      const { events, result } = await runCollecting(pod, "review it");
      expect(result.output).toEqual(ANSWER);
      const partials = events.filter((e): e is Partial => e.type === "output_partial");
      expect(partials.length).toBeGreaterThan(3);
      expect(partials.every((p) => p.callId === "call_final")).toBe(true);
      expect(partials.at(-1)?.partial).toEqual(result.output);
      // In order: the findings read so far never shrink, and the elements complete 0, 1, 2.
      const counts = partials.map((p) => (Array.isArray(p.partial.findings) ? p.partial.findings.length : 0));
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      const elements = partials.flatMap((p) => p.elements);
      expect(elements).toEqual(
        ANSWER.findings.map((value, index) => ({
          property: "findings",
          index,
          value,
          valid: true,
          issues: [],
        })),
      );
      // All of them before the run's end; only the answer call streams (lint's arguments do not).
      expect(events.findLastIndex((e) => e.type === "output_partial")).toBeLessThan(
        events.findIndex((e) => e.type === "run_end"),
      );
    });
  }

  it("checks each element as it completes: an invalid one is reported with its issues", async () => {
    const { w, pod } = await typedPod("anthropic");
    const bad = {
      verdict: "approve",
      findings: [
        { line: "twelve", note: "x" },
        { line: 3, note: "ok" },
      ],
    };
    w.double.enqueue(streamedAnswer(bad, 5), streamedAnswer({ verdict: "approve", findings: [] }));
    const { events, result } = await runCollecting(pod, "review");
    expect(result.output).toEqual({ verdict: "approve", findings: [] });
    const first = events.filter(
      (e): e is Partial => e.type === "output_partial" && e.callId === "call_final",
    );
    const elements = first.flatMap((p) => p.elements);
    expect(elements[0]).toMatchObject({ index: 0, valid: false });
    expect(elements[0]?.issues[0]?.path).toBe("/line");
    expect(elements[1]).toMatchObject({ index: 1, valid: true, issues: [] });
  });

  it("arguments the provider sends whole give one partial, the answer; pod.subscribe sees it too", async () => {
    const { w, pod } = await typedPod("openai-chat");
    const seen: PodEvent[] = [];
    pod.subscribe((event) => seen.push(event));
    w.double.enqueue(streamedAnswer(ANSWER));
    const { events, result } = await runCollecting(pod, "review");
    const partials = events.filter((e): e is Partial => e.type === "output_partial");
    expect(partials.map((p) => p.partial)).toEqual([result.output]);
    expect(partials[0]?.elements.map((e) => e.index)).toEqual([0, 1, 2]);
    expect(seen.filter((e) => e.type === "output_partial")).toEqual(partials);
  });

  it("a pod without [output] emits none", async () => {
    const w = await world({ toolPackages: [testTools({ lint: () => "clean" })] });
    const pod = await w.pod();
    w.double.enqueue(
      { parts: [{ type: "tool_call", name: "lint", arguments: { verdict: "x" }, chunkSize: 3 }] },
      { parts: [{ type: "text", text: "done" }] },
    );
    const run = pod.run("lint it");
    const types: string[] = [];
    for await (const event of run) types.push(event.type);
    expect(types).toContain("tool_call_start");
    expect(types).not.toContain("output_partial");
  });
});
