import { describe, expect, it } from "vitest";
import type { AfterTurnJobContext } from "../src/pod/after-turn-jobs.js";
import { HooksFrozenError } from "../src/pod/errors.js";
import type { PodEvent } from "../src/pod/events.js";
import type { PodWarning } from "../src/warnings.js";
import { kinds, sessionEntries, text, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

/** A promise with its resolver. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("after-turn jobs and extension entries (generic pod extension points)", () => {
  it("run in the background after a finished turn, one pass at a time, coalescing; an append waits for the open turn", async () => {
    const w = await world();
    const pod = await w.pod();
    const release = deferred();
    const started = deferred();
    let running = 0;
    let maxRunning = 0;
    const passes: number[] = [];
    pod.addAfterTurnJob({
      name: "probe",
      async run(ctx: AfterTurnJobContext) {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        let count = 0;
        for await (const _ of ctx.readEntries()) count += 1;
        passes.push(count);
        started.resolve();
        if (passes.length === 1) await release.promise;
        await ctx.appendExtension("probe", { pass: passes.length });
        running -= 1;
      },
    });
    w.double.enqueue(text("one"), text("two"), text("three"));
    await pod.run("first").result;
    await started.promise;
    // The job of turn one is still running while turns two and three finish: they ask for one more pass.
    await pod.run("second").result;
    // Released while turn three is open (its invoke is written): the append must wait for the turn to close.
    pod.subscribe((event) => {
      if (event.type === "turn_start" && event.turn === 3) release.resolve();
    });
    await pod.run("third").result;
    await pod.whenJobsIdle();
    expect(maxRunning).toBe(1);
    // Three turns, but turns two and three ended while pass one ran: coalesced into fewer passes.
    expect(passes.length).toBeLessThan(4);
    expect(passes.length).toBeGreaterThanOrEqual(2);
    const entries = await sessionEntries(w.workspace);
    // Each extension entry sits between turns, never inside one.
    const k = kinds(entries);
    k.forEach((kind, i) => {
      if (kind === "extension")
        expect(
          k
            .slice(0, i)
            .filter((x) => x !== "extension")
            .at(-1),
        ).toBe("run_completed");
    });
    // Pass one's append was released inside turn three: it still landed after that turn's end.
    expect(k.indexOf("extension")).toBeGreaterThan(k.lastIndexOf("invoke"));
    const last = { pass: passes.length };
    expect(
      entries.filter((e) => e.kind === "extension").map((e) => e.kind === "extension" && e.payload),
    ).toEqual(passes.map((_, i) => ({ pass: i + 1 })));
    expect(pod.extensions.get("probe")).toEqual(last);
    const restored = await w.restore(pod.sessionId ?? "");
    expect(restored.extensions.get("probe")).toEqual(last);
  });

  it("readFrom gives a job the committed entries of the head segment from an index on, as the store holds them", async () => {
    const w = await world();
    const pod = await w.pod();
    const reads: { from: number; kinds: string[] }[] = [];
    pod.addAfterTurnJob({
      name: "incremental",
      async run(ctx: AfterTurnJobContext) {
        const from = (ctx.extension("incremental") as { next?: number } | undefined)?.next ?? 0;
        const read: string[] = [];
        for await (const batch of ctx.readFrom({ sessionId: ctx.sessionId, segmentId: ctx.segmentId }, from))
          for (const entry of batch) read.push(entry.kind);
        reads.push({ from, kinds: read });
        await ctx.appendExtension("incremental", { next: from + read.length + 1 });
      },
    });
    w.double.enqueue(text("one"), text("two"));
    await pod.run("first").result;
    await pod.whenJobsIdle();
    await pod.run("second").result;
    await pod.whenJobsIdle();
    const entries = kinds(await sessionEntries(w.workspace));
    expect(reads).toHaveLength(2);
    // The first pass read the segment from its start; the second only what came after its own entry.
    expect(reads[0]?.kinds).toEqual(entries.slice(0, reads[0]?.kinds.length));
    expect(reads[1]?.from).toBe((reads[0]?.kinds.length ?? 0) + 1);
    expect(reads[1]?.kinds).toEqual(entries.slice(reads[1]?.from, -1));
    expect(reads[1]?.kinds[0]).toBe("invoke");
  });

  it("a failing job is a warning, never a failed turn", async () => {
    const w = await world();
    const warnings: PodWarning[] = [];
    const pod = await w.pod({ onWarning: (warning) => warnings.push(warning) });
    const events: PodEvent[] = [];
    pod.subscribe((event) => events.push(event));
    pod.addAfterTurnJob({
      name: "broken",
      run: () => Promise.reject(new Error("boom")),
    });
    w.double.enqueue(text("fine"));
    const result = await pod.run("go").result;
    await pod.whenJobsIdle();
    expect(result.status).toBe("finished");
    expect(warnings).toEqual([
      { code: "pod.after_turn_job", message: 'after-turn job "broken" failed: boom' },
    ]);
    // Run events reach subscribers too.
    expect(events.some((e) => e.type === "turn_end")).toBe(true);
  });

  it("compaction waits for a running after-turn job (it reads the segment being replaced)", async () => {
    const w = await world({
      manifestExtra: "[compaction]\nthreshold = 100000\nrequest_threshold = 100000\nretained_tokens = 1",
    });
    const pod = await w.pod();
    const release = deferred();
    const started = deferred();
    const order: string[] = [];
    pod.addAfterTurnJob({
      name: "slow-reader",
      async run() {
        started.resolve();
        await release.promise;
        order.push("job done");
      },
    });
    w.double.enqueue(text("one ".repeat(200)));
    await pod.run(`first ${"words ".repeat(200)}`).result;
    await started.promise;
    w.double.enqueue(
      {
        parts: [{ type: "tool_call", name: "write_summary", arguments: { summary: "The user said first." } }],
      },
      text("Summary written."),
    );
    const compacting = pod.compact().then((outcome) => order.push(`compacted ${outcome.status}`));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(order).toEqual([]);
    expect(w.double.requests).toHaveLength(1); // the compaction worker has not been asked yet
    release.resolve();
    await compacting;
    expect(order).toEqual(["job done", "compacted compacted"]);
  });

  it("jobs are registered before the first run, like hooks", async () => {
    const w = await world();
    const pod = await w.pod();
    w.double.enqueue(text("ok"));
    await pod.run("go").result;
    const error = (() => {
      try {
        pod.addAfterTurnJob({ name: "late", run: async () => {} });
      } catch (e) {
        return e;
      }
    })();
    expect(HooksFrozenError.isInstance(error)).toBe(true);
  });
});
