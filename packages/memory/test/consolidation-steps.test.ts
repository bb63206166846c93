import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BACKOFF_BASE_MS } from "../src/consolidate/backoff.js";
import { runMemoryConsolidation } from "../src/consolidate/run-consolidation.js";
import { MemoryWorkerError } from "../src/errors.js";
import { memoryPaths } from "../src/records/layout.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { PROTECTION_THRESHOLD } from "../src/store/usage-log.js";
import { callTool, clock, decision, NOW, record, say, stagingFiles, useMemoryWorlds } from "./helpers.js";

// The two steps of a consolidation, each able to fail on its own; a staging that keeps failing
// backs off; provenance and protection enforced by the tools, not the prompt.
const world = useMemoryWorlds();

const STAGING = ".podkit/memory/_staging";
const stagingEntry = (id: string, session: string, topic = "pnpm workspace layout") =>
  JSON.stringify({
    id,
    created_at: "2026-04-15T09:00:00Z",
    session_id: session,
    source: { segment_id: `seg-${id}`, range: [1, 8] },
    decisions: [{ topic, decision: "Use pnpm workspaces", reason: "npm hoisting broke builds" }],
    discussions: [],
    attempts: [],
    requests: [],
  });
const OLD = ".podkit/memory/decisions/old-notes.md";
const oldNotes = decision("status: open", `Old notes.\n${"A line worth keeping.\n".repeat(20)}`);
const withStaging = (extra: Record<string, string> = {}) =>
  world({
    files: Object.fromEntries(
      Object.entries({ [`${STAGING}/a.json`]: stagingEntry("a", "s1"), [OLD]: oldNotes, ...extra }).map(
        ([k, v]) => [`project/${k}`, v],
      ),
    ),
  });
const writePnpm = (extra: Record<string, unknown> = {}) =>
  callTool("memory_write", {
    kind: "decision",
    slug: "use-pnpm",
    content: record("status: resolved", "Use pnpm workspaces: npm hoisting broke builds."),
    reason: "from staging",
    staged: ["s1-d1"],
    ...extra,
  });
const tidyEdit = callTool("memory_edit", {
  kind: "decision",
  slug: "old-notes",
  old_text: "A line worth keeping.\n".repeat(20),
  new_text: "Short.",
  reason: "trim",
});

describe("the integration and tidy steps", () => {
  it("a tidy step that runs out of requests keeps the integration and reports the tidy as incomplete", async () => {
    const w = await withStaging();
    w.double.enqueue(writePnpm(), say("Integrated."), tidyEdit);
    const result = await runMemoryConsolidation({ ...w.job(), force: true, tidyMaxRequests: 1 });
    expect(result).toMatchObject({
      status: "consolidated",
      consumed: ["a"],
      tidy: { status: "incomplete", reason: expect.stringContaining('"limit_reached"') },
    });
    if (result.status !== "consolidated") return;
    expect(result.changes.map((c) => [c.op, c.slug])).toEqual([["create", "use-pnpm"]]);
    expect(existsSync(join(w.workspace, ".podkit/memory/decisions/use-pnpm.md"))).toBe(true);
    // The tidy step's own change was dropped with it.
    expect(await readFile(join(w.workspace, OLD), "utf8")).toBe(oldNotes);
    expect(await stagingFiles(w.workspace)).toEqual([]);
  });

  it("positive control: a tidy step that finishes keeps its changes", async () => {
    const w = await withStaging();
    w.double.enqueue(writePnpm(), say("Integrated."), tidyEdit, say("Tidied."));
    const result = await runMemoryConsolidation({ ...w.job(), force: true });
    expect(result).toMatchObject({ status: "consolidated", tidy: { status: "done" } });
    expect(await readFile(join(w.workspace, OLD), "utf8")).toContain("Short.");
    // The tidy step came as its own message from the catalog, after the integration.
    const tidyMessage = JSON.stringify(w.double.requests[2]?.body.messages);
    expect(tidyMessage).toContain(
      w.catalog.render("memory_consolidation_tidy", { protection_threshold: 3 }).slice(0, 60),
    );
  });

  it("a run failing on the same staging backs off and says so; force and time both end the wait", async () => {
    const w = await withStaging();
    w.double.enqueue({ fault: { kind: "status", status: 500 } });
    const failed = await runMemoryConsolidation({ ...w.job(), force: true }).catch((e) => e);
    expect(MemoryWorkerError.isInstance(failed)).toBe(true);
    expect(failed.message).toContain(
      `failure 1 on it: the next automatic run waits until ${new Date(NOW.getTime() + BACKOFF_BASE_MS).toISOString()}`,
    );
    const requests = w.double.requests.length;
    const waiting = await runMemoryConsolidation({ ...w.job(), thresholdFiles: 1 });
    expect(waiting).toMatchObject({
      status: "backing_off",
      failures: 1,
      lastError: expect.stringContaining("500"),
    });
    expect(w.double.requests.length).toBe(requests);

    // A second failure doubles the wait.
    const later = new Date(NOW.getTime() + BACKOFF_BASE_MS);
    w.double.enqueue({ fault: { kind: "status", status: 500 } });
    const second = await runMemoryConsolidation({
      ...w.job({ clock: () => later }),
      thresholdFiles: 1,
    }).catch((e) => e);
    expect(second.message).toContain(
      `failure 2 on it: the next automatic run waits until ${new Date(later.getTime() + 2 * BACKOFF_BASE_MS).toISOString()}`,
    );

    // `podkit memory consolidate` (force) does not wait; a success forgets the failures.
    w.double.enqueue(writePnpm(), say("Integrated."), say("Nothing to tidy."));
    expect(await runMemoryConsolidation({ ...w.job({ clock: () => later }), force: true })).toMatchObject({
      status: "consolidated",
    });
    expect(existsSync(join(memoryPaths(w.workspace).stagingDir, ".consolidation.failures.json"))).toBe(false);
  });
});

describe("provenance by code, in a consolidation", () => {
  it("sources the model composes are replaced by those of the staged items it names", async () => {
    const w = await withStaging();
    const composed = record(
      "status: resolved\nsources:\n  - segment_id: invented-by-the-model\n    range: [0, 999]",
      "Use pnpm workspaces.",
    );
    w.double.enqueue(writePnpm({ content: composed }), say("Integrated."), say("Nothing to tidy."));
    await runMemoryConsolidation({ ...w.job(), force: true });
    const text = await readFile(join(w.workspace, ".podkit/memory/decisions/use-pnpm.md"), "utf8");
    expect(text).toContain("sources:\n  - segment_id: seg-a\n    range: [1, 8]\n");
    expect(text).not.toContain("invented-by-the-model");
    expect(JSON.stringify(w.double.requests[1]?.body.messages.at(-1))).toContain(
      "the value in your content was replaced",
    );
  });

  it("a decision naming no staged item is refused for its empty sources", async () => {
    const w = await withStaging();
    w.double.enqueue(writePnpm({ staged: [] }), writePnpm(), say("Integrated."), say("Nothing to tidy."));
    await runMemoryConsolidation({ ...w.job(), force: true });
    const refused = JSON.stringify(w.double.requests[1]?.body.messages.at(-1));
    expect(refused).toContain("sources must name at least one source");
    expect(existsSync(join(w.workspace, ".podkit/memory/decisions/use-pnpm.md"))).toBe(true);
  });

  it("new knowledge is refused with an empty candidate report, and created from a recurring topic (positive control)", async () => {
    const knowledge = callTool("memory_write", {
      kind: "knowledge",
      slug: "pnpm-layout",
      content: record(
        "kind: howto\ndescription: How packages are laid out; use when adding one.",
        "One package per folder.",
      ),
      reason: "recurring",
      staged: ["s1-d1"],
    });
    const lone = await withStaging();
    lone.double.enqueue(knowledge, say("Could not."), say("Nothing to tidy."));
    await runMemoryConsolidation({ ...lone.job(), force: true });
    expect(JSON.stringify(lone.double.requests[1]?.body.messages.at(-1))).toContain(
      "the knowledge candidate report is empty), so no knowledge may be created in this run",
    );
    expect(existsSync(join(lone.workspace, ".podkit/knowledge/pnpm-layout.md"))).toBe(false);

    const recurring = await withStaging({ [`${STAGING}/b.json`]: stagingEntry("b", "s2") });
    recurring.double.enqueue(knowledge, say("Created."), say("Nothing to tidy."));
    await runMemoryConsolidation({ ...recurring.job(), force: true });
    expect(await readFile(join(recurring.workspace, ".podkit/knowledge/pnpm-layout.md"), "utf8")).toContain(
      "last_sources:\n  - segment_id: seg-a\n    range: [1, 8]\n",
    );
  });
});

describe("the protection threshold, enforced by the tools", () => {
  async function used(workspace: string, times: number) {
    const store = await MemoryStore.open(workspace, { clock });
    for (let i = 0; i < times; i++) await store.noteUsage("used", "decision", "old-notes");
  }

  it("memory_delete refuses a record used at the threshold, naming the count (positive control below it)", async () => {
    const w = await withStaging();
    await used(w.workspace, PROTECTION_THRESHOLD);
    w.double.enqueue(
      callTool("memory_delete", { kind: "decision", slug: "old-notes", reason: "unused" }),
      say("Kept."),
      say("Nothing to tidy."),
    );
    await runMemoryConsolidation({ ...w.job(), force: true });
    expect(JSON.stringify(w.double.requests[1]?.body.messages.at(-1))).toContain(
      `was read explicitly (memory_read) ${PROTECTION_THRESHOLD} times, at or above the protection threshold of ${PROTECTION_THRESHOLD}`,
    );
    expect(existsSync(join(w.workspace, OLD))).toBe(true);

    const below = await withStaging();
    await used(below.workspace, PROTECTION_THRESHOLD - 1);
    below.double.enqueue(
      callTool("memory_delete", { kind: "decision", slug: "old-notes", reason: "unused" }),
      say("Deleted."),
      say("Nothing to tidy."),
    );
    await runMemoryConsolidation({ ...below.job(), force: true });
    expect(existsSync(join(below.workspace, OLD))).toBe(false);
  });

  it("the tidy step may not cut a protected record below half; the integration step may", async () => {
    const tidy = await withStaging();
    await used(tidy.workspace, PROTECTION_THRESHOLD);
    tidy.double.enqueue(writePnpm(), say("Integrated."), tidyEdit, say("Tried."));
    const result = await runMemoryConsolidation({ ...tidy.job(), force: true });
    expect(result).toMatchObject({ status: "consolidated", tidy: { status: "done" } });
    expect(JSON.stringify(tidy.double.requests[3]?.body.messages.at(-1))).toContain(
      "cannot compress it this much",
    );
    expect(await readFile(join(tidy.workspace, OLD), "utf8")).toBe(oldNotes);

    const integration = await withStaging();
    await used(integration.workspace, PROTECTION_THRESHOLD);
    integration.double.enqueue(tidyEdit, say("Integrated."), say("Nothing to tidy."));
    await runMemoryConsolidation({ ...integration.job(), force: true });
    expect(await readFile(join(integration.workspace, OLD), "utf8")).toContain("Short.");
  });
});
