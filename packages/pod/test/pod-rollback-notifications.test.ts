import { CancelledError } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { caught } from "./helpers.js";
import { kinds, sessionEntries, text, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request body.
const sent = (request: any): string => JSON.stringify(request.body.messages);

describe("nothing is dropped when a turn is cancelled", () => {
  it("notifications committed in a user turn cancelled before any model output stay in the log with the message; the next request has each once, in order", async () => {
    const w = await world();
    const pod = await w.pod();
    let cancelNext = true;
    pod.addHooks({
      preRequest: () => {
        if (!cancelNext) return { action: "continue" };
        cancelNext = false;
        return { action: "cancel", reason: "not now" };
      },
    });
    pod.notify("build #1 passed");
    pod.notify("build #2 failed");
    const error = await caught(pod.run("status?"));
    expect(CancelledError.isInstance(error)).toBe(true);
    // The turn stays in the log: the person's message, the notifications it committed, its failure.
    expect(kinds(await sessionEntries(w.workspace))).toEqual([
      "segment_start",
      "invoke",
      "user_input",
      "system_item",
      "system_item",
      "run_errored",
    ]);
    expect(w.double.requests).toHaveLength(0);

    pod.notify("build #3 passed");
    w.double.enqueue(text("noted"));
    expect((await pod.run("status now?")).status).toBe("finished");
    const request = sent(w.double.requests[0]);
    const at = (message: string) => request.indexOf(message);
    expect(at("build #1 passed")).toBeGreaterThan(-1);
    expect(at("build #1 passed")).toBeLessThan(at("build #2 failed"));
    expect(at("build #2 failed")).toBeLessThan(at("build #3 passed"));
    expect(request.split("build #1 passed")).toHaveLength(2);
    const bodies = (await sessionEntries(w.workspace)).flatMap((entry) =>
      entry.kind === "system_item" && entry.item.kind === "notification" ? [String(entry.item.body)] : [],
    );
    expect(bodies).toHaveLength(3);
    expect(bodies.map((body) => /build #\d/.exec(body)?.[0])).toEqual(["build #1", "build #2", "build #3"]);
  });
});
