import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import { attachMemory } from "../src/pod/attach-memory.js";
import { callTool, clock, say } from "./helpers.js";
import { jobEvents, usePodWorlds } from "./pod-helpers.js";

const world = usePodWorlds();
const CHAT = "chat claude-sonnet-4-5";

const EXTRACTED = {
  decisions: [{ topic: "layout", decision: "Use pnpm workspaces", reason: "npm hoisting broke builds" }],
  discussions: [],
  attempts: [],
  requests: [],
};

const providers: TracerProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.shutdown()));
});

function capture() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  providers.push(tracerProvider);
  const spans = () => exporter.getFinishedSpans();
  /** The finished children of the span named `name` (undefined: no such span). */
  const childrenOf = (name: string) => {
    const parent = spans().find((span) => span.name === name);
    if (parent === undefined) return undefined;
    return spans().filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId);
  };
  return { tracerProvider, spans, childrenOf };
}

describe("memory workers in a pod's telemetry", () => {
  it("the extract worker's requests are chat spans under the memory_extract span, not under the run", async () => {
    const otel = capture();
    const w = await world("[memory]\nextract_threshold = 1\nconsolidation_threshold_files = 100");
    const pod = await w.pod({ telemetry: { tracerProvider: otel.tracerProvider } });
    attachMemory(pod, { clock });
    w.double.enqueue(say("Use pnpm workspaces."), callTool("write_extracted", EXTRACTED), say("ok"));
    await pod.run("How should the repo be laid out? npm hoisting broke our builds.").result;
    await pod.whenJobsIdle();

    expect(jobEvents(w.events)).toEqual(["extract:start", "extract:done"]);
    // Three model requests: the turn's, then the extract worker's two.
    expect(w.double.requests).toHaveLength(3);
    const names = (spans: { name: string }[] | undefined) => spans?.map((span) => span.name);
    expect(names(otel.childrenOf("invoke_agent memory-pod"))).toEqual([CHAT]);
    const extractChats = otel.childrenOf("memory_extract memory-pod") ?? [];
    expect(names(extractChats)).toEqual([CHAT, CHAT]);
    expect(extractChats.map((span) => span.attributes["gen_ai.response.finish_reasons"])).toEqual([
      ["tool_use"],
      ["end_turn"],
    ]);
    expect(extractChats[0]?.attributes["gen_ai.conversation.id"]).toBe(pod.sessionId);
  });
});
