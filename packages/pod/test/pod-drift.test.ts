import { describe, expect, it } from "vitest";
import type { PodEvent } from "../src/pod/events.js";
import type { PodWarning } from "../src/warnings.js";
import { readAllSegments, text, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

describe("two writers, one session", () => {
  it("the second pod to write gets the store's drift fork and an event says so; nothing is lost on either side", async () => {
    const w = await world();
    const first = await w.pod();
    w.double.enqueue(text("base"));
    await first.run("base turn");
    const sessionId = first.sessionId as string;

    // Two pods restored from the same head, each with its own store (as two processes would be).
    const warnings: PodWarning[] = [];
    const a = await w.restore(sessionId);
    const b = await w.restore(sessionId, { onWarning: (warning) => warnings.push(warning) });
    w.double.enqueue(text("from a"), text("from b"));
    await a.run("turn of a");
    const handle = b.run("turn of b");
    const events: PodEvent[] = [];
    for await (const event of handle) events.push(event);

    const drift = events.find((event) => event.type === "drift_fork");
    expect(drift).toBeDefined();
    expect(warnings.map((warning) => warning.code)).toContain("pod.drift_fork");
    const segments = await readAllSegments(w.workspace);
    expect(segments.size).toBe(2);
    const texts = [...segments.values()].map((entries) => JSON.stringify(entries));
    const original = texts.find((t) => t.includes("turn of a"));
    const fork = texts.find((t) => t.includes("turn of b"));
    expect(original).toBeDefined();
    expect(fork).toBeDefined();
    expect(original).not.toContain("turn of b");
    expect(fork).toContain("base turn"); // the fork carries the shared history
    expect(fork).toContain('"forked_from"');
    expect(b.history.map((item) => JSON.stringify(item)).join()).toContain("from b");

    // A later restore continues the head and names the other live branch instead of hiding it.
    const later: PodWarning[] = [];
    await w.restore(sessionId, { onWarning: (warning) => later.push(warning) });
    expect(later.map((warning) => warning.code)).toEqual(["pod.other_branches"]);
  });
});
