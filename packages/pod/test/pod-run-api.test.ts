import { definePodkitToolPackage } from "@podkit/tools";
import { describe, expect, it } from "vitest";
import { PodBusyError } from "../src/pod/errors.js";
import type { PodEvent } from "../src/pod/events.js";
import type { PodWarning } from "../src/warnings.js";
import { caught } from "./helpers.js";
import { kinds, sessionEntries, testTools, text, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

/** Events without their volatile parts (usage numbers), in order. */
const shape = (event: PodEvent): string => {
  switch (event.type) {
    case "turn_start":
      return `turn_start ${event.turn} ${event.trigger}`;
    case "request_start":
      return `request_start ${event.request}`;
    case "text_delta":
      return `text ${event.delta}`;
    case "tool_call_start":
      return `tool_call_start ${event.name} ${event.arguments}`;
    case "tool_call_end":
      return `tool_call_end ${event.name} ${event.summary}`;
    case "turn_end":
      return `turn_end ${event.turn}`;
    case "run_end":
      return `run_end ${event.result?.status ?? event.error?.message}`;
    default:
      return event.type;
  }
};

describe("pod.run: events and result", () => {
  it("a scripted two-tool turn yields exactly this event sequence, and the handle resolves to the result", async () => {
    const w = await world({ toolPackages: [testTools({ left: () => "L", right: () => "R" })] });
    const pod = await w.pod();
    w.double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_a", name: "left", arguments: { n: 1 } },
          { type: "tool_call", id: "toolu_b", name: "right", arguments: { n: 2 } },
        ],
      },
      { parts: [{ type: "text", text: "both done", chunkSize: 5 }] },
    );
    const handle = pod.run("use both tools");
    const events: string[] = [];
    for await (const event of handle) events.push(shape(event));
    expect(events).toEqual([
      "turn_start 1 user",
      "request_start 1",
      "usage",
      'tool_call_start left {"n":1}',
      'tool_call_start right {"n":2}',
      "tool_call_end left L",
      "tool_call_end right R",
      "request_start 2",
      "text both ",
      "text done",
      "usage",
      "turn_end 1",
      "run_end finished",
    ]);
    const result = await handle;
    expect(result).toMatchObject({
      status: "finished",
      requests: 2,
      text: "both done",
      stopReason: { kind: "stop" },
    });
    expect(result.usage).toHaveLength(2);
  });

  it("breaking out of the iteration early does not stop or hang the run", async () => {
    const w = await world({ toolPackages: [testTools({ ping: () => "pong" })] });
    const pod = await w.pod();
    w.double.enqueue(
      { parts: [{ type: "tool_call", name: "ping", arguments: {} }] },
      text("finished anyway"),
    );
    const handle = pod.run("go");
    for await (const event of handle) {
      if (event.type === "request_start") break;
    }
    const result = await handle;
    expect(result.text).toBe("finished anyway");
    expect(kinds(await sessionEntries(w.workspace)).at(-1)).toBe("run_completed");
  });

  it("a second run while one is in progress is a PodBusyError; the first is unaffected", async () => {
    const w = await world();
    const pod = await w.pod();
    w.double.enqueue({
      parts: [{ type: "text", text: "slow" }],
      fault: { kind: "stall", afterEvents: 1, ms: 150 },
    });
    const first = pod.run("one");
    const error = await caught(() => pod.run("two"));
    expect(PodBusyError.isInstance(error)).toBe(true);
    expect(error.message).toContain("one run at a time");
    expect((await first).text).toBe("slow");
    expect(w.double.requests).toHaveLength(1);
  });

  it("a failed run rejects both the promise and the iteration, after a run_end event carrying the error", async () => {
    const w = await world();
    const pod = await w.pod({ env: {} });
    const handle = pod.run("no key");
    const events: PodEvent[] = [];
    const error = await caught(async () => {
      for await (const event of handle) events.push(event);
    });
    expect(error.message).toContain("ANTHROPIC_API_KEY");
    expect(events.at(-1)).toMatchObject({ type: "run_end", result: undefined });
    expect((await caught(handle)).message).toBe(error.message);
  });

  it("a tool package's warning during a run reaches onWarning, and the run's events show it once", async () => {
    const pkg = definePodkitToolPackage({
      name: "warner",
      tools: (ctx) => [
        () => ({
          name: "flaky",
          description: "d",
          inputSchema: { type: "object" },
          execute: () => {
            ctx.warn({ code: "warner.cache_miss", message: "cache was cold", source: "warner" });
            return { summary: "ok" };
          },
        }),
      ],
    });
    const w = await world({ toolPackages: [pkg] });
    const seen: PodWarning[] = [];
    const pod = await w.pod({ onWarning: (warning) => seen.push(warning) });
    w.double.enqueue({ parts: [{ type: "tool_call", name: "flaky", arguments: {} }] }, text("done"));
    const events: PodEvent[] = [];
    for await (const event of pod.run("go")) events.push(event);
    expect(seen).toEqual([{ code: "pod.tools", message: "warner: cache was cold" }]);
    expect(events.filter((event) => event.type === "warning")).toEqual([
      { type: "warning", code: "pod.tools", message: "warner: cache was cold" },
    ]);
  });

  it("resume() continues a paused turn (invoke trigger resume); close() closes the tools", async () => {
    let closed = 0;
    const pkg = definePodkitToolPackage({
      name: "closing",
      tools: (ctx) => {
        ctx.onClose(() => {
          closed += 1;
        });
        return [
          () => ({
            name: "noop",
            description: "d",
            inputSchema: { type: "object" },
            execute: () => ({ summary: "ok" }),
          }),
        ];
      },
    });
    const w = await world({ toolPackages: [pkg] });
    const pod = await w.pod();
    let pauses = 1;
    pod.addHooks({ onTurnEnd: () => (pauses-- > 0 ? { action: "pause" } : { action: "finish" }) });
    w.double.enqueue(text("draft"), text("final"));
    expect((await pod.run("write")).status).toBe("paused");
    expect(pod.interrupted).toBe(true);
    w.double.enqueue();
    const result = await pod.resume();
    expect(result.status).toBe("finished");
    const entries = await sessionEntries(w.workspace);
    expect(entries.filter((e) => e.kind === "invoke").map((e) => (e as { trigger: string }).trigger)).toEqual(
      ["user", "resume"],
    );
    expect(kinds(entries).filter((k) => k === "run_completed")).toHaveLength(2);
    await pod.close();
    expect(closed).toBe(1);
  });
});
