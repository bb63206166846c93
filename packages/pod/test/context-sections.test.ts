import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import type { CapturedRequest } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { type ContextSection, PodUsageError } from "../src/index.js";
import { compactionTable, compactResponder, mainRequests } from "./compaction-harness.js";
import { collectWarnings } from "./helpers.js";
import { readAllSegments, sessionEntries, text, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();
const NOTES = "project/.podkit/NOTES.md";

/** A request's messages without cache-control markers (breakpoints move from request to request by design). */
const messagesOf = (request: CapturedRequest | undefined): unknown[] =>
  JSON.parse(JSON.stringify(request?.body.messages), (key, value) =>
    key === "cache_control" ? undefined : value,
  );

/** Every request starts with the whole previous request: nothing before the new part ever changed. */
function expectGrowingPrefix(requests: readonly CapturedRequest[]): void {
  for (let i = 1; i < requests.length; i++) {
    const previous = messagesOf(requests[i - 1]);
    expect(messagesOf(requests[i]).slice(0, previous.length), `request ${i + 1}`).toEqual(previous);
  }
}

const contextItems = (entries: readonly { kind: string; item?: unknown }[]) =>
  entries.filter(
    (entry) => entry.kind === "system_item" && (entry.item as { kind: string }).kind === "context",
  );

async function runTurns(
  pod: { run(input: string): PromiseLike<unknown> },
  double: { enqueue(...r: never[]): void },
  from: number,
  to: number,
) {
  for (let turn = from; turn <= to; turn++) {
    double.enqueue(text(`answer ${turn}`) as never);
    await pod.run(`question ${turn}`);
  }
}

describe("context sections (seed 003)", () => {
  it("unchanged state: one context block, then no new history item across 10 turns (the request prefix never changes)", async () => {
    const w = await world({ files: { [NOTES]: "Remember: the release is on Friday.\n" } });
    const pod = await w.pod();
    await runTurns(pod, w.double, 1, 10);
    const entries = await sessionEntries(w.workspace);
    const blocks = contextItems(entries);
    expect(blocks).toHaveLength(1);
    expect((blocks[0]?.item as { body: string } | undefined)?.body).toBe(
      pod.catalog.render("context_update_section", {
        sections: [{ id: "notes", text: "Remember: the release is on Friday." }],
      }),
    );
    expectGrowingPrefix(w.double.requests);
  });

  it("positive control: a section whose data changes every time commits a block every turn", async () => {
    let calls = 0;
    const ticking: ContextSection<number> = { id: "ticks", load: () => ++calls, render: (n) => `tick ${n}` };
    const w = await world();
    const pod = await w.pod({ contextSections: [ticking] });
    await runTurns(pod, w.double, 1, 10);
    expect(contextItems(await sessionEntries(w.workspace))).toHaveLength(10);
  });

  it("a changed NOTES.md commits exactly one new context block", async () => {
    const w = await world({ files: { [NOTES]: "v1 notes" } });
    const pod = await w.pod();
    await runTurns(pod, w.double, 1, 2);
    await writeFile(join(w.workspace, ".podkit", "NOTES.md"), "v2 notes");
    await runTurns(pod, w.double, 3, 5);
    const blocks = contextItems(await sessionEntries(w.workspace)).map(
      (entry) => (entry.item as { body: string }).body,
    );
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toContain("v1 notes");
    expect(blocks[1]).toContain("v2 notes");
    expectGrowingPrefix(w.double.requests);
  });

  it("no NOTES.md and no other section: no context block at all", async () => {
    const w = await world();
    const pod = await w.pod();
    await runTurns(pod, w.double, 1, 2);
    expect(contextItems(await sessionEntries(w.workspace))).toEqual([]);
  });

  it("after compaction the block appears once in the new segment, and is not committed again while unchanged", async () => {
    const w = await world({
      files: { [NOTES]: "notes that survive compaction" },
      manifestExtra: compactionTable({ threshold: 100000, request_threshold: 100000, retained_tokens: 40 }),
      double: { measureInputTokens: true, respond: compactResponder({ summary: "summary" }) },
    });
    const pod = await w.pod();
    await runTurns(pod, w.double, 1, 3);
    await pod.compact();
    await runTurns(pod, w.double, 4, 5);
    const segment = (await readAllSegments(w.workspace)).get(`${pod.sessionId}/${pod.segmentId}`) ?? [];
    const start = segment[0] as {
      history: Item[];
      history_sources?: { index: number; system_item?: { kind: string } }[];
    };
    const inStart = (start.history_sources ?? []).filter((source) => source.system_item?.kind === "context");
    expect(inStart).toHaveLength(1);
    expect(JSON.stringify(start.history[inStart[0]?.index as number])).toContain(
      "notes that survive compaction",
    );
    expect(contextItems(segment)).toEqual([]);
    const last = mainRequests(w.double.requests).at(-1);
    expect(JSON.stringify(last?.body.messages).split("notes that survive compaction")).toHaveLength(2);
  });

  it("after a restore the model sees exactly what it saw before, and no block is re-committed", async () => {
    const w = await world({ files: { [NOTES]: "restored notes" } });
    const pod = await w.pod();
    await runTurns(pod, w.double, 1, 2);
    const restored = await w.restore(pod.sessionId as string);
    await runTurns(restored, w.double, 3, 3);
    expectGrowingPrefix(w.double.requests);
    expect(contextItems(await sessionEntries(w.workspace))).toHaveLength(1);
  });

  it("sections keep a fixed order, are registered before the first run only, and a failing load keeps its last content", async () => {
    let fail = false;
    const flaky: ContextSection<string> = {
      id: "flaky",
      load: () => {
        if (fail) throw new Error("disk on fire");
        return "flaky data";
      },
      render: (data) => data,
    };
    const absent: ContextSection<string> = { id: "absent", load: () => null, render: (data) => data };
    const { warnings, sink } = collectWarnings();
    const w = await world({ files: { [NOTES]: "the notes" } });
    const pod = await w.pod({ contextSections: [flaky], onWarning: sink });
    pod.addContextSection({
      id: "task",
      load: () => ({ step: 2, of: 3 }),
      render: (t) => `step ${t.step} of ${t.of}`,
    });
    pod.addContextSection(absent);
    expect(() => pod.addContextSection({ ...absent })).toThrow(/already registered/);
    await runTurns(pod, w.double, 1, 1);
    fail = true;
    await runTurns(pod, w.double, 2, 2);
    const error = (() => {
      try {
        pod.addContextSection({ id: "late", load: () => null, render: String });
      } catch (caught) {
        return caught;
      }
    })();
    expect(PodUsageError.isInstance(error)).toBe(true);
    const blocks = contextItems(await sessionEntries(w.workspace)).map(
      (entry) => (entry.item as { body: string }).body,
    );
    expect(blocks).toHaveLength(1);
    const order = ["notes", "flaky", "task"].map((id) => blocks[0]?.indexOf(`<context id="${id}">`));
    for (const index of order) expect(index).toBeGreaterThanOrEqual(0);
    expect(order).toEqual([...(order as number[])].sort((a, b) => a - b));
    expect(blocks[0]).toContain("step 2 of 3");
    expect(blocks[0]).not.toContain('id="absent"');
    expect(warnings.map((warning) => warning.message).join()).toContain(
      'context section "flaky" failed to load',
    );
  });
});
