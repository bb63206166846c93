import { Worker } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import type { PodEvent } from "../src/pod/events.js";
import { compactionTable, compactRequests, compactResponder, mainRequests } from "./compaction-harness.js";
import { text, usePodWorlds } from "./pod-harness.js";
import { useTelemetryCapture } from "./telemetry-harness.js";

const world = usePodWorlds();
const capture = useTelemetryCapture();

const ERROR = 2; // SpanStatusCode.ERROR
const CHAT = "chat claude-sonnet-4-5";

describe("pod telemetry: compaction and background job spans", () => {
  it("pod.compact() is a compaction span of its own, with the segments and token estimates", async () => {
    const otel = capture();
    const w = await world({
      manifestExtra: compactionTable({ threshold: 100000, request_threshold: 100000, retained_tokens: 40 }),
      double: { measureInputTokens: true, respond: compactResponder({ summary: "what happened so far" }) },
    });
    const pod = await w.pod({ telemetry: otel.options });
    w.double.enqueue(text("a"), text("b"));
    await pod.run("one");
    await pod.run("two");
    const outcome = await pod.compact();
    expect(outcome.status).toBe("compacted");
    const compaction = otel.trees().filter((tree) => tree.name === "compaction test");
    expect(compaction).toHaveLength(1);
    const { fromSegmentId, toSegmentId, tokensBefore, tokensAfter } = outcome as Extract<
      typeof outcome,
      { status: "compacted" }
    >;
    expect(compaction[0]?.attributes).toEqual({
      "podkit.operation.name": "compaction",
      "gen_ai.agent.name": "test",
      "gen_ai.conversation.id": pod.sessionId,
      "podkit.segment.id": fromSegmentId,
      "podkit.compaction.reason": "manual",
      "podkit.compaction.from_segment_id": fromSegmentId,
      "podkit.compaction.to_segment_id": toSegmentId,
      "podkit.compaction.tokens_before": tokensBefore,
      "podkit.compaction.tokens_after": tokensAfter,
    });
    // The compaction worker's own requests are chat spans under the compaction, not the runs.
    expect(compactRequests(w.double.requests)).toHaveLength(2);
    expect(compaction[0]?.children.map((child) => child.name)).toEqual([CHAT, CHAT]);
    expect(compaction[0]?.children.map((child) => child.attributes["podkit.request"])).toEqual([1, 2]);
    expect(compaction[0]?.children[0]?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.conversation.id": pod.sessionId,
      "gen_ai.response.finish_reasons": ["tool_use"],
    });
    expect(compaction[0]?.children[0]?.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    const runs = otel.trees().filter((tree) => tree.name === "invoke_agent test");
    expect(runs.flatMap((run) => run.children.map((child) => child.name))).toEqual([CHAT, CHAT]);
    expect(mainRequests(w.double.requests)).toHaveLength(2);
  });

  it("a compaction in a run's prelude is a child of the run, which goes on in the new segment", async () => {
    const otel = capture();
    const w = await world({
      manifestExtra: compactionTable({ threshold: 400, request_threshold: 100000, retained_tokens: 30 }),
      double: { measureInputTokens: true, respond: compactResponder({ summary: "short past" }) },
    });
    const pod = await w.pod({ telemetry: otel.options });
    w.double.enqueue(text("a ".repeat(200)), text("b"));
    await pod.run("one");
    const first = pod.segmentId;
    await pod.run("two");
    const second = otel.trees().at(-1);
    expect(second?.name).toBe("invoke_agent test");
    expect(second?.children.map((child) => child.name)).toEqual([
      "compaction test",
      "chat claude-sonnet-4-5",
    ]);
    expect(second?.children[0]?.status).toEqual({ code: 0 });
    // The compaction worker's two requests (write_summary, then its final answer) are its children.
    expect(second?.children[0]?.children.map((child) => child.name)).toEqual([CHAT, CHAT]);
    expect(second?.children[0]?.children.map((child) => child.children)).toEqual([[], []]);
    expect(second?.children[0]?.attributes).toMatchObject({
      "podkit.compaction.reason": "threshold",
      "gen_ai.conversation.id": pod.sessionId,
      "podkit.segment.id": first,
      "podkit.compaction.from_segment_id": first,
      "podkit.compaction.to_segment_id": pod.segmentId,
    });
    expect(second?.attributes["podkit.segment.id"]).toBe(pod.segmentId);
    expect(second?.children[1]?.attributes["podkit.segment.id"]).toBe(pod.segmentId);
  });

  it("a failed compaction carries its error class, and the run goes on", async () => {
    const otel = capture();
    // The summary leaves the session over this threshold: compaction refuses, nothing changes.
    const w = await world({
      manifestExtra: compactionTable({ threshold: 120, request_threshold: 100000, retained_tokens: 30 }),
      double: { measureInputTokens: true, respond: compactResponder({ summary: "short past" }) },
    });
    const pod = await w.pod({ telemetry: otel.options });
    w.double.enqueue(text("a ".repeat(200)), text("b"));
    await pod.run("one");
    expect((await pod.run("two")).text).toBe("b");
    const second = otel.trees().at(-1);
    expect(second?.status.code).toBe(0);
    const compaction = second?.children[0];
    expect(compaction?.name).toBe("compaction test");
    expect(compaction?.status.code).toBe(ERROR);
    expect(compaction?.status.message).toContain("over [compaction] threshold = 120");
    expect(compaction?.attributes["error.type"]).toBe("CompactionOverThresholdError");
    expect(compaction?.attributes["podkit.compaction.disabled"]).toBe(false);
    expect(compaction?.events.map((event) => event.name)).toEqual(["exception"]);
  });

  it("memory jobs after a turn are spans of their own; a failed one carries its error", async () => {
    const otel = capture();
    const w = await world();
    const pod = await w.pod({ telemetry: otel.options });
    let jobDone: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      jobDone = resolve;
    });
    // The events `@podkit/memory`'s after-turn job reports, in its order: any job names itself.
    pod.addAfterTurnJob({
      name: "memory",
      async run(ctx) {
        ctx.emit({ type: "job_progress", job: "memory_extract", status: "start" });
        ctx.emit({ type: "job_progress", job: "memory_extract", status: "done", detail: "staged 2 items" });
        ctx.emit({ type: "job_progress", job: "memory_consolidate", status: "start" });
        ctx.emit({
          type: "job_progress",
          job: "memory_consolidate",
          status: "failed",
          error: new RangeError("the consolidation lock is in use"),
        });
        jobDone();
      },
    });
    w.double.enqueue(text("noted"));
    await pod.run("remember this");
    await finished;
    const jobs = otel.trees().filter((tree) => tree.name.startsWith("memory_"));
    expect(jobs.map((job) => [job.name, job.attributes["podkit.job.detail"], job.status.code])).toEqual([
      ["memory_extract test", "staged 2 items", 0],
      ["memory_consolidate test", undefined, ERROR],
    ]);
    expect(jobs[1]?.attributes).toMatchObject({
      "error.type": "RangeError",
      "gen_ai.conversation.id": pod.sessionId,
    });
  });

  it("any after-turn job names itself: its job_progress reaches subscribers, its span and its worker's chat spans carry its name", async () => {
    const otel = capture();
    const w = await world();
    const pod = await w.pod({ telemetry: otel.options });
    const events: PodEvent[] = [];
    pod.subscribe((event) => events.push(event));
    pod.addAfterTurnJob({
      name: "indexer",
      async run(ctx) {
        ctx.emit({ type: "job_progress", job: "indexer", status: "start" });
        const worker = new Worker({ model: pod.modelAdapter, config: { max_tokens: 100 } });
        worker.subscribe((event) => ctx.onWorkerEvent("indexer", event));
        await worker.run("index the session", { signal: ctx.signal });
        ctx.emit({ type: "job_progress", job: "indexer", status: "done", detail: "3 files" });
      },
    });
    w.double.enqueue(text("answer"), text("indexed"));
    await pod.run("hello");
    await pod.whenJobsIdle();
    expect(events.filter((event) => event.type === "job_progress")).toEqual([
      { type: "job_progress", job: "indexer", status: "start" },
      { type: "job_progress", job: "indexer", status: "done", detail: "3 files" },
    ]);
    const job = otel.trees().find((tree) => tree.name === "indexer test");
    expect(job?.attributes).toMatchObject({
      "podkit.operation.name": "indexer",
      "podkit.job.detail": "3 files",
    });
    expect(job?.children.map((child) => child.name)).toEqual([CHAT]);
  });
});
