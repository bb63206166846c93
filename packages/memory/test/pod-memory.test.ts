import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import type { Pod } from "@podkit/pod";
import { FsStore, SessionLog, sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { EXTRACT_POINTER_DOMAIN } from "../src/extract/pointer.js";
import { attachMemory } from "../src/pod/attach-memory.js";
import type { AfterTurnJobContext } from "../src/pod/memory-job.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { callTool, clock, record, say, stagingFiles, useTempDirs } from "./helpers.js";
import { assertLogsSound, jobEvents, usePodWorlds } from "./pod-helpers.js";

const world = usePodWorlds();

const EXTRACTED = {
  decisions: [
    { topic: "pnpm workspace layout", decision: "Use pnpm workspaces", reason: "npm hoisting broke builds" },
  ],
  discussions: [],
  attempts: [],
  requests: [],
};

const checkedDir = useTempDirs();

async function turn(pod: Pod, input: string) {
  const result = await pod.run(input).result;
  await pod.whenJobsIdle();
  return result;
}

describe("memory in a pod (use by pods)", () => {
  it("extracts after a turn past extract_threshold and appends the pointer through the pod's own writer", async () => {
    const w = await world("[memory]\nextract_threshold = 1\nconsolidation_threshold_files = 100");
    const pod = await w.pod();
    attachMemory(pod, { clock });
    w.double.enqueue(say("Use pnpm workspaces."), callTool("write_extracted", EXTRACTED), say("ok"));
    await turn(pod, "How should the repo be laid out? npm hoisting broke our builds.");

    const entries = await w.entries(pod);
    const pointerAt = entries.findIndex((e) => e.kind === "extension");
    expect(entries[pointerAt]).toMatchObject({
      kind: "extension",
      domain: EXTRACT_POINTER_DOMAIN,
      payload: { segment_id: pod.segmentId, next_entry: pointerAt },
    });
    // The pointer came after the turn's terminal entry, never inside the turn.
    expect(entries[pointerAt - 1]?.kind).toBe("run_completed");
    expect(pod.extensions.get(EXTRACT_POINTER_DOMAIN)).toEqual({
      segment_id: pod.segmentId,
      next_entry: pointerAt,
    });
    const [staging] = await stagingFiles(w.workspace);
    expect(staging).toMatchObject({
      session_id: pod.sessionId,
      source: { segment_id: pod.segmentId, range: [1, pointerAt - 1] },
    });
    expect(jobEvents(w.events)).toEqual(["extract:start", "extract:done"]);
    // The extract worker is a separate, disposable worker: its own system prompt.
    expect(w.double.requests[1]?.body.system[0].text).toBe(
      pod.catalog.render("memory_extract_system", { language: "English" }),
    );
  });

  it("the pointer resets on a new segment: after compaction the next extract starts at the new segment's first entry", async () => {
    const w = await world(
      "[memory]\nextract_threshold = 1\nconsolidation_threshold_files = 100\n[compaction]\nthreshold = 1000000\nrequest_threshold = 1000000\nretained_tokens = 1",
    );
    const pod = await w.pod();
    attachMemory(pod, { clock });
    w.double.enqueue(
      say(`Answer ${"words ".repeat(200)}`),
      callTool("write_extracted", EXTRACTED),
      say("ok"),
    );
    await turn(pod, `first ${"words ".repeat(200)}`);
    const first = pod.segmentId;
    w.double.enqueue(
      callTool("write_summary", { summary: "The user asked about the layout." }),
      say("Summary written."),
    );
    const outcome = await pod.compact();
    expect(outcome.status).toBe("compacted");
    expect(pod.segmentId).not.toBe(first);
    w.double.enqueue(say("Second answer."), callTool("write_extracted", EXTRACTED), say("ok"));
    await turn(pod, "second question");
    const [, second] = await stagingFiles(w.workspace);
    expect(second).toMatchObject({ source: { segment_id: pod.segmentId, range: [1, expect.any(Number)] } });
    const extract = JSON.stringify(w.double.requests.at(-2)?.body.messages);
    expect(extract).toContain("second question");
    expect(extract).not.toContain("first words");
  });

  it("does not extract below the threshold", async () => {
    const w = await world("[memory]\nextract_threshold = 1000000");
    const pod = await w.pod();
    attachMemory(pod);
    w.double.enqueue(say("Hi."));
    await turn(pod, "hello");
    expect(w.double.requests).toHaveLength(1);
    expect((await w.entries(pod)).some((e) => e.kind === "extension")).toBe(false);
  });

  it("each after-turn pass reads only the entries after the pointer, through the pod's incremental read", async () => {
    const w = await world("[memory]\nextract_threshold = 1\nconsolidation_threshold_files = 100");
    const pod = await w.pod();
    // The pod's own context, its reads counted: what each pass took from the store.
    const passes: { whole: number; from: number[] }[] = [];
    const counted = (ctx: AfterTurnJobContext): AfterTurnJobContext => {
      const pass = { whole: 0, from: [] as number[] };
      passes.push(pass);
      return {
        ...ctx,
        readEntries: async function* (segmentId) {
          pass.whole += 1;
          yield* ctx.readEntries(segmentId);
        },
        readFrom: async function* (ref, from) {
          pass.from.push(from);
          yield* ctx.readFrom?.(ref, from) ?? [];
        },
      };
    };
    attachMemory(
      {
        manifest: pod.manifest,
        catalog: pod.catalog,
        modelAdapter: pod.modelAdapter,
        addContextSection: (section) => pod.addContextSection(section),
        registerTool: (tool) => pod.registerTool(tool),
        addAfterTurnJob: (job) => pod.addAfterTurnJob({ ...job, run: (ctx) => job.run(counted(ctx)) }),
      },
      { clock },
    );
    for (const input of ["first question", "second question", "third question"]) {
      w.double.enqueue(say(`Answer to ${input}.`), callTool("write_extracted", EXTRACTED), say("ok"));
      await turn(pod, input);
    }
    const entries = await w.entries(pod);
    const pointers = entries.flatMap((e, i) => (e.kind === "extension" ? [i] : []));
    expect(w.warnings).toEqual([]);
    expect(pointers).toHaveLength(3);
    // No pass read the segment whole; after the first, each started right after the last pointer.
    expect(passes.map((p) => p.whole)).toEqual([0, 0, 0]);
    expect(passes[1]?.from.at(-1)).toBe(pointers[0]);
    expect(passes[2]?.from.at(-1)).toBe(pointers[1]);
    // Each extract saw its own turn only.
    const extracts = w.double.requests.filter((r) => r.body.system[0].text.includes("extract"));
    expect(JSON.stringify(extracts.at(-1)?.body.messages)).toContain("third question");
    expect(JSON.stringify(extracts.at(-1)?.body.messages)).not.toContain("second question");
  });

  it("a failing extract never fails the turn: a warning and a failed event, the pointer unchanged, retried after the next turn", async () => {
    const w = await world("[memory]\nextract_threshold = 1\nconsolidation_threshold_files = 100");
    const pod = await w.pod();
    attachMemory(pod, { clock });
    w.double.enqueue(say("First answer."), { fault: { kind: "status", status: 400, body: "bad request" } });
    const first = await turn(pod, "first question");
    expect(first.status).toBe("finished");
    expect(jobEvents(w.events)).toEqual(["extract:start", "extract:failed"]);
    expect(
      w.warnings.some(
        (warning) =>
          warning.code === "pod.after_turn_job" && warning.message.includes('after-turn job "memory" failed'),
      ),
    ).toBe(true);
    expect(pod.extensions.has(EXTRACT_POINTER_DOMAIN)).toBe(false);

    w.double.enqueue(say("Second answer."), callTool("write_extracted", EXTRACTED), say("ok"));
    await turn(pod, "second question");
    const [staging] = await stagingFiles(w.workspace);
    // The range starts where the failed extract started: right after segment_start.
    expect(staging).toMatchObject({ source: { range: [1, expect.any(Number)] } });
    expect(JSON.stringify(w.double.requests.at(-2)?.body.messages)).toContain("first question");
  });

  it("consolidates in the background once staging passes its threshold", async () => {
    const w = await world("[memory]\nextract_threshold = 1\nconsolidation_threshold_files = 1");
    const pod = await w.pod();
    attachMemory(pod, { clock });
    w.double.enqueue(
      say("Answer."),
      callTool("write_extracted", EXTRACTED),
      say("ok"),
      say("Nothing durable to add."),
    );
    await turn(pod, "question");
    expect(jobEvents(w.events)).toEqual([
      "extract:start",
      "extract:done",
      "consolidate:start",
      "consolidate:done",
    ]);
    expect(w.double.requests[3]?.body.system[0].text).toBe(
      pod.catalog.render("memory_consolidation_system", { language: "English" }),
    );
    expect(await stagingFiles(w.workspace)).toEqual([]);
  });

  it("the memory context section appears once after consolidation changes the summary, not on every turn", async () => {
    const w = await world("[memory]\nextract_threshold = 1\nconsolidation_threshold_files = 1");
    const pod = await w.pod();
    attachMemory(pod, { clock });
    const summaryBlocks = async () =>
      (await w.entries(pod)).filter(
        (e) => e.kind === "system_item" && e.item.kind === "context" && e.item.body.includes("## Memory"),
      );
    const empty = { decisions: [], discussions: [], attempts: [], requests: [] };
    const summary = record("", "The team uses pnpm workspaces.");

    // Turn one: extract, then the background consolidation writes the summary.
    w.double.enqueue(
      say("one"),
      callTool("write_extracted", EXTRACTED),
      say("ok"),
      callTool("memory_write", {
        kind: "summary",
        slug: "summary",
        content: summary,
        reason: "first summary",
      }),
      say("done"),
    );
    await turn(pod, "turn one");
    expect(jobEvents(w.events)).toEqual([
      "extract:start",
      "extract:done",
      "consolidate:start",
      "consolidate:done",
    ]);
    expect(await summaryBlocks()).toHaveLength(0); // turn one ran before the summary existed

    // Turns two and three: nothing new to stage; the summary enters the conversation once.
    for (const input of ["turn two", "turn three"]) {
      w.double.enqueue(say(input), callTool("write_extracted", empty), say("ok"));
      await turn(pod, input);
    }
    const blocks = await summaryBlocks();
    expect(blocks).toHaveLength(1);
    const block = blocks[0];
    expect(block?.kind === "system_item" && block.item.body).toContain(
      pod.catalog.render("resident_memory_section", { summary: "The team uses pnpm workspaces." }).trim(),
    );
    const third = JSON.stringify(w.double.requests.at(-3)?.body.messages);
    expect(third).toContain("turn three");
    expect(third.split("The team uses pnpm workspaces.").length - 1).toBe(1);

    // A changed summary is committed again, once.
    const store = await MemoryStore.open(w.workspace, { clock });
    await store.edit("summary", "summary", "pnpm workspaces", "pnpm workspaces and changesets", "rewrite");
    w.double.enqueue(say("four"), callTool("write_extracted", empty), say("ok"));
    await turn(pod, "turn four");
    expect(await summaryBlocks()).toHaveLength(2);
  });

  it("[memory] tools = true gives the main worker memory_query and memory_read, reading current memory", async () => {
    const w = await world("[memory]\nextract_threshold = 1000000\ntools = true");
    const pod = await w.pod();
    const attached = attachMemory(pod, { clock });
    expect(attached.tools).toEqual(["knowledge_read", "memory_query", "memory_read"]);
    // Written after the pod was built: the tools see it.
    const store = await MemoryStore.open(w.workspace, { clock });
    await store.write(
      "request",
      "answer-in-english",
      record("sources: [{segment_id: seg-0, range: [1, 2]}]", "Answer in English."),
      "r",
    );
    w.double.enqueue(callTool("memory_query", { query: "english" }), say("I will answer in English."));
    await turn(pod, "what language?");
    const tools = w.double.requests[0]?.body.tools.map((t: { name: string }) => t.name);
    expect(tools).toEqual(expect.arrayContaining(["memory_query", "memory_read"]));
    expect(JSON.stringify(w.double.requests[1]?.body.messages)).toContain("Answer in English.");

    const off = await world("[memory]\nextract_threshold = 1000000");
    const plain = await off.pod();
    expect(attachMemory(plain).tools).toEqual(["knowledge_read"]);
  });

  it("the generic write tools cannot write the memory trees, with [memory] on or off (positive control: a plain file writes)", async () => {
    const scope = '[[scope.allow]]\ntarget = ".."\npermission = "write"';
    const attempt = async (memory: boolean, path: string) => {
      const w = await world(`${scope}\n${memory ? "[memory]\nextract_threshold = 1000000" : ""}`);
      const pod = await w.pod();
      if (memory) attachMemory(pod);
      w.double.enqueue(callTool("write_file", { path, content: "not linted" }), say("done"));
      await turn(pod, "write it");
      return { written: existsSync(join(w.workspace, path)), w };
    };
    // Memory lives under .podkit/, podkit's own files: no write tool reaches it (docs/sandbox.md).
    for (const memory of [true, false]) {
      const guarded = await attempt(memory, ".podkit/memory/decisions/sneaky.md");
      expect(guarded.written).toBe(false);
      expect(JSON.stringify(guarded.w.double.requests[1]?.body.messages)).toContain("is_error");
    }
    expect((await attempt(true, "notes/sneaky.md")).written).toBe(true);
  });
});

describe("the after-test log check of these pod tests", () => {
  it("catches a log whose invoke was never closed (positive control)", async () => {
    const workspace = await checkedDir("logcheck");
    const store = new FsStore<Item>({ root: sessionsRoot(workspace) });
    const log = await SessionLog.create(store, { systemPrompt: "s", config: {} });
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "hi" },
    ]);
    await store.close();
    await expect(assertLogsSound(workspace)).rejects.toThrow(/never closed|left open/);
  });
});
