import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";
import { routeBySystemPrompt, TREE_MANIFEST } from "./subpods-harness.js";
import { useTelemetryCapture } from "./telemetry-harness.js";

const world = usePodWorlds();
const capture = useTelemetryCapture();

/** The `execute_tool` span of tool call `callId`. */
function toolSpan(spans: readonly ReadableSpan[], callId: string): ReadableSpan {
  const span = spans.find(
    (s) => s.name.startsWith("execute_tool ") && s.attributes["gen_ai.tool.call.id"] === callId,
  );
  expect(span, `execute_tool span of ${callId}`).toBeDefined();
  return span as ReadableSpan;
}

/** The `invoke_agent` spans of one session's runs, in the order they started. */
function runSpans(spans: readonly ReadableSpan[], sessionId: string): ReadableSpan[] {
  return spans
    .filter((s) => s.name.startsWith("invoke_agent ") && s.attributes["gen_ai.conversation.id"] === sessionId)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
}

/** Asserts `child` is a child span of `parent`, in its trace. */
function expectNestedUnder(child: ReadableSpan | undefined, parent: ReadableSpan): void {
  expect(child).toBeDefined();
  expect(child?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
  expect(child?.spanContext().traceId).toBe(parent.spanContext().traceId);
}

describe("sub-pods: a child's run is traced under the parent's tool call", () => {
  it("root → worker → reviewer in the foreground, a background spawn and send_pod: each child's invoke_agent span is a child of the execute_tool span that runs it", async () => {
    const route = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "worker", task: "implement it" }, "call-root"), text("root done")],
      WORKER: [
        toolCall("spawn_pod", { role: "reviewer", task: "review it" }, "call-worker"),
        text("worker done"),
        text("worker again"),
      ],
      REVIEWER: [text("LGTM"), text("background LGTM")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TREE_MANIFEST,
      files: { "project/src/a.ts": "export {}\n" },
      double: { respond: route.respond },
    });
    const telemetry = capture();
    const root = await w.pod({ telemetry: telemetry.options });
    await root.run("build and review").result;
    const rootId = root.sessionId as string;
    const [worker] = await root.children();
    const workerId = worker?.sessionId as string;

    // A second run: a reviewer in the background, then a follow-up to the worker.
    route.scripts.ROOT?.push(
      toolCall("spawn_pod", { role: "reviewer", task: "look again", background: true }, "call-bg"),
      toolCall("send_pod", { id: workerId, message: "once more" }, "call-send"),
      text("second done"),
    );
    const backgroundEnded = new Promise<void>((resolve) =>
      root.subscribe((e) => {
        if (e.type === "subpod" && e.path === "root › reviewer#1" && e.event.type === "run_end") resolve();
      }),
    );
    await root.run("review in the background and ask the worker again").result;
    await backgroundEnded;

    const spans = telemetry.spans();
    const [rootFirst, rootSecond] = runSpans(spans, rootId);
    // Control: a root's runs start their own traces.
    expect(rootFirst?.parentSpanContext).toBeUndefined();
    expect(rootSecond?.parentSpanContext).toBeUndefined();

    const [workerFirst, workerSecond] = runSpans(spans, workerId);
    expectNestedUnder(workerFirst, toolSpan(spans, "call-root"));
    expectNestedUnder(workerSecond, toolSpan(spans, "call-send"));
    expect(toolSpan(spans, "call-send").spanContext().traceId).toBe(rootSecond?.spanContext().traceId);

    const reviewers = (await root.children()).filter((c) => c.role === "reviewer");
    expect(reviewers).toHaveLength(1);
    const [nested] = spans.filter(
      (s) =>
        s.name.startsWith("invoke_agent ") &&
        s.parentSpanContext?.spanId === toolSpan(spans, "call-worker").spanContext().spanId,
    );
    // Two levels down: the reviewer's run, in the root's first trace.
    expectNestedUnder(nested, toolSpan(spans, "call-worker"));
    expect(nested?.spanContext().traceId).toBe(rootFirst?.spanContext().traceId);
    expect(nested?.attributes["gen_ai.conversation.id"]).not.toBe(workerId);

    const [background] = runSpans(spans, reviewers[0]?.sessionId as string);
    expectNestedUnder(background, toolSpan(spans, "call-bg"));
  });
});
