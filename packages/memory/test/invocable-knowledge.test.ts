import { describe, expect, it } from "vitest";
import { attachMemory } from "../src/pod/attach-memory.js";
import { memoryPaths } from "../src/records/layout.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { usageReport } from "../src/store/usage-log.js";
import { callTool, clock, decision, record, say, writeFiles } from "./helpers.js";
import { usePodWorlds } from "./pod-helpers.js";

// `model_invocation: true` knowledge is offered to the pod: names and descriptions in the memory
// context section, in slug order; bodies through knowledge_read. Cache-safe: only a change of that
// list (or the summary) appends a new block, and every byte before it stays the same.
const world = usePodWorlds();

const TS = "created_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-01T10:00:00Z";
const knowledge = (description: string, invocable: boolean, body: string) =>
  record(
    `${TS}\nkind: howto\ndescription: ${description}\nmodel_invocation: ${invocable}\nlast_sources: []`,
    body,
  );
const FILES = {
  ".podkit/knowledge/release-steps.md": knowledge(
    "How to cut a release; use when releasing.",
    true,
    "RELEASE-BODY",
  ),
  ".podkit/knowledge/api-style.md": knowledge(
    "The API naming rules; use when adding an endpoint.",
    true,
    "API-BODY",
  ),
  ".podkit/knowledge/old-trivia.md": knowledge("Trivia nobody calls up.", false, "TRIVIA-BODY"),
  ".podkit/memory/decisions/use-pnpm.md": decision(),
};

const HEADING = "## Knowledge you can call up";

describe("knowledge a pod can call up (model_invocation: true)", () => {
  it("is listed by name and description in slug order, read with knowledge_read, and re-sent only when that list changes", async () => {
    const w = await world("[memory]\nextract_threshold = 1000000");
    await writeFiles(w.workspace, FILES);
    const pod = await w.pod();
    attachMemory(pod, { clock });
    // The messages of request i, without the cache breakpoints (which move to the newest turn).
    const messages = (i: number) =>
      JSON.parse(
        JSON.stringify(w.double.requests[i]?.body.messages, (key, value) =>
          key === "cache_control" ? undefined : value,
        ),
      ) as unknown[];
    const blocks = (i: number) => JSON.stringify(messages(i)).split(HEADING).length - 1;

    w.double.enqueue(callTool("knowledge_read", { slug: "api-style" }), say("Read it."));
    await pod.run("Add an endpoint.").result;
    await pod.whenJobsIdle();
    const first = JSON.stringify(messages(0));
    const listed = pod.catalog.render("memory_knowledge_section", {
      knowledge: [
        { slug: "api-style", description: "The API naming rules; use when adding an endpoint." },
        { slug: "release-steps", description: "How to cut a release; use when releasing." },
      ],
    });
    expect(first).toContain(JSON.stringify(listed.trim()).slice(1, -1));
    expect(first).not.toContain("old-trivia");
    expect(first).not.toContain("API-BODY");
    expect(w.double.requests[0]?.body.tools.map((t: { name: string }) => t.name)).toContain("knowledge_read");
    // The body comes through the tool, and the read counts as use.
    expect(JSON.stringify(messages(1).at(-1))).toContain("API-BODY");
    expect(await usageReport(memoryPaths(w.workspace))).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: "knowledge", slug: "api-style", used: 1 })]),
    );

    // An entry not offered is not read.
    w.double.enqueue(callTool("knowledge_read", { slug: "old-trivia" }), say("Not offered."));
    await pod.run("Any trivia?").result;
    expect(JSON.stringify(messages(3).at(-1))).toContain('no knowledge entry \\"old-trivia\\" is offered');
    expect(JSON.stringify(messages(3))).not.toContain("TRIVIA-BODY");

    // Changes that do not touch the list: the same block, no new one; every earlier byte kept.
    const store = await MemoryStore.open(w.workspace, { clock });
    await store.edit("knowledge", "old-trivia", "TRIVIA-BODY", "TRIVIA-BODY, revised", "r");
    await store.edit("knowledge", "api-style", "API-BODY", "API-BODY, revised", "r");
    await store.edit("decision", "use-pnpm", "We decided this.", "We decided this again.", "r");
    w.double.enqueue(say("ok"));
    await pod.run("Next.").result;
    const fourth = messages(4);
    expect(blocks(4)).toBe(1);
    expect(JSON.stringify(fourth.slice(0, messages(3).length))).toBe(JSON.stringify(messages(3)));

    // A change of the list (a description, a new invocable entry) appends one new block.
    await store.edit(
      "knowledge",
      "release-steps",
      "How to cut a release",
      "How to cut and publish a release",
      "r",
    );
    w.double.enqueue(say("ok"));
    await pod.run("And now?").result;
    expect(blocks(5)).toBe(2);
    expect(JSON.stringify(messages(5).slice(0, fourth.length))).toBe(JSON.stringify(fourth));
    expect(JSON.stringify(messages(5).slice(fourth.length))).toContain("How to cut and publish a release");
    await pod.close();
  });

  it("positive control: without invocable knowledge no block and no list are sent", async () => {
    const w = await world("[memory]\nextract_threshold = 1000000");
    await writeFiles(w.workspace, {
      ".podkit/knowledge/old-trivia.md": FILES[".podkit/knowledge/old-trivia.md"],
    });
    const pod = await w.pod();
    attachMemory(pod, { clock });
    w.double.enqueue(say("ok"));
    await pod.run("hi").result;
    expect(JSON.stringify(w.double.requests[0]?.body.messages)).not.toContain(HEADING);
    await pod.close();
  });
});
