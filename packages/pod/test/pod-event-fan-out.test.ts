import { describe, expect, it } from "vitest";
import { PodUsageError } from "../src/errors.js";
import type { PodEvent } from "../src/pod/events.js";
import { caught, collectWarnings } from "./helpers.js";
import { kinds, sessionEntries, systemOf, text, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

describe("event fan-out is isolated from the run", () => {
  it("a subscriber that throws on run_end never rejects the saved turn; exactly one run_end; one warning", async () => {
    const w = await world();
    const { warnings, sink } = collectWarnings();
    const pod = await w.pod({ onWarning: sink });
    const seenByOthers: PodEvent[] = [];
    pod.subscribe((event) => {
      if (event.type === "run_end") throw new Error("display crashed");
    });
    pod.subscribe((event) => seenByOthers.push(event));
    w.double.enqueue(text("saved answer"));
    const handle = pod.run("hello");
    const handleEvents: PodEvent[] = [];
    for await (const event of handle) handleEvents.push(event);
    const result = await handle;
    expect(result.status).toBe("finished");
    expect(result.text).toBe("saved answer");
    expect(handleEvents.filter((event) => event.type === "run_end")).toHaveLength(1);
    // The other listener still got every event, the run_end once.
    expect(seenByOthers.filter((event) => event.type === "run_end")).toHaveLength(1);
    expect(kinds(await sessionEntries(w.workspace)).slice(-2)).toEqual(["turn_end", "run_completed"]);
    expect(warnings).toEqual([
      {
        code: "pod.listener",
        message: expect.stringContaining(
          "a pod.subscribe listener threw on a run_end event (display crashed)",
        ),
      },
    ]);
  });

  it("a subscriber that throws on every event is reported once and the pod goes on, turn after turn", async () => {
    const w = await world();
    const { warnings, sink } = collectWarnings();
    const pod = await w.pod({ onWarning: sink });
    pod.subscribe(() => {
      throw new Error("always");
    });
    w.double.enqueue(text("one"), text("two"));
    expect((await pod.run("first")).status).toBe("finished");
    expect((await pod.run("second")).status).toBe("finished");
    expect(pod.turn).toBe(2);
    expect(warnings.map((warning) => warning.code)).toEqual(["pod.listener"]);
  });

  it("a run's events can be iterated once; a second iteration is a typed usage error", async () => {
    const w = await world();
    const pod = await w.pod();
    w.double.enqueue(text("ok"));
    const handle = pod.run("hi");
    for await (const _ of handle) {
      // drain
    }
    const error = await caught(async () => {
      for await (const _ of handle) {
        // never reached
      }
    });
    expect(PodUsageError.isInstance(error)).toBe(true);
    expect(error.message).toBe("a run's events can be iterated once");
  });
});

describe("warnings follow one path: the sink, then a warning event for whoever watches", () => {
  it("the worker's and an after-turn job's warnings reach onWarning with their codes, and each one the listeners as a warning event", async () => {
    const w = await world();
    const { warnings, sink } = collectWarnings();
    const pod = await w.pod({ onWarning: sink });
    pod.addAfterTurnJob({ name: "broken", run: () => Promise.reject(new Error("boom")) });
    const events: PodEvent[] = [];
    pod.subscribe((event) => events.push(event));
    // A cut-off answer: the worker warns that it is incomplete.
    w.double.enqueue({ parts: [{ type: "text", text: "half an ans" }], finishReason: "length" });
    await pod.run("tell me everything");
    await pod.whenJobsIdle();
    expect(warnings.map((warning) => warning.code)).toEqual(["pod.worker", "pod.after_turn_job"]);
    expect(warnings[0]?.message).toContain("the answer is incomplete");
    // Every warning the sink got while someone watched is the same warning as an event, in order.
    const shown = events.filter((event) => event.type === "warning");
    expect(shown).toEqual(warnings.map(({ code, message }) => ({ type: "warning", code, message })));
  });

  it("a listener that throws on a warning event is reported to the sink once, and nothing loops", async () => {
    const w = await world();
    const { warnings, sink } = collectWarnings();
    const pod = await w.pod({ onWarning: sink });
    let calls = 0;
    pod.subscribe((event) => {
      if (event.type !== "warning") return;
      calls += 1;
      throw new Error("display broke");
    });
    pod.addAfterTurnJob({ name: "broken", run: () => Promise.reject(new Error("boom")) });
    w.double.enqueue(text("fine"));
    await pod.run("hello");
    await pod.whenJobsIdle();
    expect(calls).toBe(1);
    expect(warnings.map((warning) => warning.code)).toEqual(["pod.after_turn_job", "pod.listener"]);
  });
});

describe("the system prompt is rendered once, even when asked for concurrently", () => {
  it("renderSystemPrompt() next to run() shares one render: the provider got the string segment_start holds", async () => {
    let clockReads = 0;
    // A clock that moves: two renders would give two different prompts.
    const clock = () => new Date(Date.UTC(2026, 3, 15, 9, 30, clockReads++));
    const w = await world({ systemPrompt: "at={{ datetime }}" });
    const pod = await w.pod({ clock });
    w.double.enqueue(text("ok"));
    const rendering = pod.renderSystemPrompt();
    const result = await pod.run("hi");
    expect(result.status).toBe("finished");
    const rendered = await rendering;
    expect(clockReads).toBe(1);
    const start = (await sessionEntries(w.workspace))[0];
    const captured = systemOf(w.double.requests[0] as never);
    expect(start).toMatchObject({ kind: "segment_start", system_prompt: rendered });
    expect(captured).toBe(rendered);
    expect(pod.systemPrompt).toBe(rendered);
  });
});
