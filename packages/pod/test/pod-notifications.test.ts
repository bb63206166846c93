import { describe, expect, it } from "vitest";
import { NOTIFICATION_CAPACITY } from "../src/pod/pod-options.js";
import type { PodWarning } from "../src/warnings.js";
import { gate, kinds, sessionEntries, testTools, text, toolCall, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request body.
const sent = (request: any): string => JSON.stringify(request.body.messages);

describe("notifications", () => {
  it("a notification pushed during a long tool call is committed as a system item before the next request", async () => {
    const slow = gate();
    const w = await world({ toolPackages: [testTools({ slow: slow.run })] });
    const pod = await w.pod();
    w.double.enqueue(toolCall("slow"), text("ok"));
    const handle = pod.run("go");
    const events: string[] = [];
    const collecting = (async () => {
      for await (const event of handle) if (event.type === "notification") events.push(event.message);
    })();
    await slow.running;
    pod.notify("CI finished");
    slow.release();
    await collecting;
    const wrapped = pod.catalog.render("notify_wrapper", { message: "CI finished" });
    expect(sent(w.double.requests[0])).not.toContain("CI finished");
    expect(sent(w.double.requests[1])).toContain(JSON.stringify(wrapped).slice(1, -1));
    const entries = await sessionEntries(w.workspace);
    expect(kinds(entries).slice(4, 8)).toEqual(["assistant_item", "tool_result", "system_item", "llm_usage"]);
    expect(entries[6]).toMatchObject({ item: { kind: "notification", body: wrapped } });
    expect(events).toEqual(["CI finished"]);
  });

  it("200 notifications while busy: the newest 128 arrive, in order, with one warning", async () => {
    const slow = gate();
    const warnings: PodWarning[] = [];
    const w = await world({ toolPackages: [testTools({ slow: slow.run })] });
    const pod = await w.pod({ onWarning: (warning) => warnings.push(warning) });
    w.double.enqueue(toolCall("slow"), text("ok"));
    const handle = pod.run("go");
    await slow.running;
    for (let i = 0; i < 200; i++) pod.notify(`note #${i}#`);
    slow.release();
    await handle;
    const entries = await sessionEntries(w.workspace);
    const bodies = entries.flatMap((e) =>
      e.kind === "system_item" ? [String((e.item as { body: string }).body)] : [],
    );
    expect(bodies).toHaveLength(NOTIFICATION_CAPACITY);
    expect(bodies[0]).toContain("note #72#");
    expect(bodies.at(-1)).toContain("note #199#");
    expect(sent(w.double.requests[1])).toContain("note #72#");
    expect(sent(w.double.requests[1])).not.toContain("note #71#");
    expect(warnings.filter((warning) => warning.code === "pod.notifications_dropped")).toHaveLength(1);
  });

  it("autoRun: a notification to an idle pod starts a turn (invoke trigger notify)", async () => {
    const w = await world();
    const pod = await w.pod({ autoRun: true });
    w.double.enqueue(text("first"), text("seen it"));
    await pod.run("hello");
    pod.notify("deploy done");
    await pod.whenIdle();
    expect(w.double.requests).toHaveLength(2);
    expect(sent(w.double.requests[1])).toContain("deploy done");
    const entries = await sessionEntries(w.workspace);
    expect(entries.filter((e) => e.kind === "invoke").map((e) => (e as { trigger: string }).trigger)).toEqual(
      ["user", "notify"],
    );
  });

  it("without autoRun a notification to an idle pod waits for the next run", async () => {
    const w = await world();
    const pod = await w.pod();
    pod.notify("queued");
    await pod.whenIdle();
    expect(w.double.requests).toHaveLength(0);
    w.double.enqueue(text("ok"));
    await pod.run("hi");
    expect(sent(w.double.requests[0])).toContain("queued");
  });
});
