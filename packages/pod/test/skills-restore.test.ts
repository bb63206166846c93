import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { FsStore, sessionsRoot } from "@podkit/session-store";
import type { CapturedRequest, ScriptedResponse } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import type { Pod } from "../src/pod/pod.js";
import { SKILLS_KNOWN_DOMAIN, SKILLS_LOADED_DOMAIN } from "../src/skills/skill-records.js";
import { compactionTable, compactResponder, mainRequests } from "./compaction-harness.js";
import { readAllSegments, text, toolCall, usePodWorlds, type World } from "./pod-harness.js";
import { skillMarkdown, writeSkill } from "./support/skills.js";

const world = usePodWorlds();

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of an Anthropic request body.
type Body = any;
const prefixOf = (request: CapturedRequest) =>
  JSON.stringify([(request.body as Body).system, (request.body as Body).tools]);
const bodyOf = (request: CapturedRequest | undefined): Body => request?.body ?? {};
const messagesOf = (request: CapturedRequest | undefined) => JSON.stringify(bodyOf(request).messages);

const SKILLS = "project/.podkit/skills";
const manualOnly = compactionTable({ threshold: 100000, request_threshold: 100000, retained_tokens: 40 });

/** The segment a compaction started (it has `compacted_from`). */
function compactedSegment<T extends { kind: string; compacted_from?: unknown }>(segments: T[][]): T[] {
  const found = segments.find((entries) => entries[0]?.kind === "segment_start" && entries[0].compacted_from);
  if (found === undefined) throw new Error("no compacted segment");
  return found;
}

interface Step {
  input: string;
  responses: ScriptedResponse[];
}

/**
 * One session in a fresh world: the steps in order, with the pdf skill's SKILL.md rewritten on disk
 * after the first (so reading it again would give other bytes), and a restore before each step in
 * `restoreBefore`. Returns the raw request bodies.
 */
async function session(restoreBefore: readonly number[], steps: readonly Step[]): Promise<string[]> {
  const w = await world({ systemPrompt: "{{ skills.listing }}", manifestExtra: "[skills]\n" });
  const dir = join(w.root, SKILLS);
  await writeSkill(dir, {
    name: "pdf",
    description: "Fill PDF forms.",
    body: "Version one of the pdf steps.",
  });
  let pod: Pod = await w.pod();
  for (const [i, step] of steps.entries()) {
    if (restoreBefore.includes(i)) {
      const id = pod.sessionId as string;
      await pod.close();
      pod = await w.restore(id);
    }
    w.double.enqueue(...step.responses);
    expect(await pod.run(step.input)).toMatchObject({ status: "finished" });
    if (i === 0) {
      await writeFile(
        join(dir, "pdf", "SKILL.md"),
        skillMarkdown({ name: "pdf", description: "Fill PDF forms.", body: "Version two of the pdf steps." }),
      );
    }
  }
  await pod.close();
  return w.double.requests.map((request) => request.rawBody);
}

describe("restore and replay of skills", () => {
  it("a restored pod sends byte-identical requests: the logged body, never the file read again", async () => {
    const steps: Step[] = [
      { input: "load pdf", responses: [toolCall("skill", { name: "pdf" }, "toolu_a"), text("loaded")] },
      { input: "use it", responses: [text("used")] },
      { input: "reload it", responses: [toolCall("skill", { name: "pdf" }, "toolu_b"), text("reloaded")] },
    ];
    const continuous = await session([], steps);
    const restored = await session([1, 2], steps);
    expect(restored).toHaveLength(5);
    // Not vacuous: after the restore the request carries the first body from the log, and the
    // notification that the file changed; the last one the second body, read when called.
    const afterRestore = restored[2] as string;
    expect(afterRestore).toContain("Version one of the pdf steps.");
    expect(afterRestore).not.toContain("Version two");
    expect(afterRestore).toContain("pdf changed: Fill PDF forms. (you loaded an earlier version");
    expect(restored[4]).toContain("Version two of the pdf steps.");
    expect(restored).toEqual(continuous);
  });

  it("a session begun without skills keeps its tool list when restored with [skills] on", async () => {
    const w = await world({ systemPrompt: "{{ skills.mode }}" });
    const pod = await w.pod();
    w.double.enqueue(text("one"), text("two"));
    await pod.run("first");
    await pod.close();
    await writeFile(join(w.workspace, ".podkit", "manifest.toml"), "[skills]\n", { flag: "a" });
    await writeSkill(join(w.root, SKILLS), { name: "pdf", description: "d" });
    await w.reload();
    const restored = await w.restore(pod.sessionId as string);
    await restored.run("second");
    expect(prefixOf(w.double.requests[1] as CapturedRequest)).toBe(
      prefixOf(w.double.requests[0] as CapturedRequest),
    );
    expect(restored.systemPrompt).toMatch(/^off\n/);
    expect(JSON.stringify(bodyOf(w.double.requests[1]).tools)).not.toContain('"name":"skill"');
  });
});

describe("skills across a compaction", () => {
  const loads = (...names: string[]): Step[] =>
    names.map((name) => ({
      input: `use ${name}`,
      responses: [toolCall("skill", { name }), text(`followed ${name}`)],
    }));

  async function compactedWorld(reinjectBudget: number): Promise<{ w: World; pod: Pod }> {
    const w = await world({
      systemPrompt: "{{ skills.listing }}",
      manifestExtra: `[skills]\nreinject_budget_tokens = ${reinjectBudget}\n${manualOnly}`,
      double: { respond: compactResponder({ summary: "the story so far" }) },
    });
    const dir = join(w.root, SKILLS);
    await writeSkill(dir, {
      name: "pdf",
      description: "PDFs.",
      body: `PDF-STEPS ${"fill the form. ".repeat(20)}`,
    });
    await writeSkill(dir, { name: "review", description: "Reviews.", body: "REVIEW-STEPS read the diff." });
    const pod = await w.pod();
    for (const step of [
      ...loads("pdf", "review"),
      { input: "chat", responses: [text("a long answer ".repeat(10))] },
    ]) {
      w.double.enqueue(...step.responses);
      await pod.run(step.input);
    }
    expect(await pod.compact()).toMatchObject({ status: "compacted" });
    return { w, pod };
  }

  it("re-injects the active skills' logged bodies into the new segment, and restores from there byte-identically", async () => {
    const { w, pod } = await compactedWorld(8000);
    const segments = [...(await readAllSegments(w.workspace)).values()];
    expect(segments).toHaveLength(2);
    const compacted = compactedSegment(segments);
    const start = compacted[0] as Extract<(typeof compacted)[number], { kind: "segment_start" }>;
    const attachments = (start.history_sources ?? []).map((source) =>
      "system_item" in source ? source.system_item : undefined,
    );
    expect(attachments.filter((item) => item?.skill !== undefined).map((item) => item?.skill)).toEqual([
      "pdf",
      "review",
    ]);
    const texts = JSON.stringify(start.history);
    expect(texts).toContain("[Skill pdf, loaded before this conversation was compacted; it still applies]");
    expect(texts.split("REVIEW-STEPS")).toHaveLength(2);
    // The skills the model knows and those still active are in the new segment's log.
    const domains = compacted.flatMap((entry) => (entry.kind === "extension" ? [entry] : []));
    expect(domains.map((entry) => entry.domain)).toEqual([SKILLS_KNOWN_DOMAIN, SKILLS_LOADED_DOMAIN]);
    expect(domains[1]?.payload).toMatchObject({ active: [{ name: "pdf" }, { name: "review" }] });

    const id = pod.sessionId as string;
    await pod.close();
    const restored = await w.restore(id);
    w.double.enqueue(text("after"));
    await restored.run("go on");
    const main = mainRequests(w.double.requests);
    expect(new Set(main.map(prefixOf)).size).toBe(1);
    expect(messagesOf(main.at(-1))).toContain("PDF-STEPS");
  });

  it("a process that died between the compaction and its skills entries: the restore finds them in the segment it was cut from", async () => {
    const { w, pod } = await compactedWorld(8000);
    const id = pod.sessionId as string;
    const segmentId = pod.segmentId as string;
    await pod.close();
    const store = new FsStore<Item>({ root: sessionsRoot(w.workspace) });
    try {
      // The compacted segment as the crash left it: its segment_start alone.
      expect(await store.truncate({ sessionId: id, segmentId }, 1)).toMatchObject({ status: "truncated" });
    } finally {
      await store.close();
    }
    const restored = await w.restore(id);
    expect(restored.extensions.has(SKILLS_KNOWN_DOMAIN)).toBe(false);
    w.double.enqueue(text("after"));
    await restored.run("go on");
    const main = mainRequests(w.double.requests);
    expect(new Set(main.map(prefixOf)).size).toBe(1);
    expect(restored.extensions.get(SKILLS_KNOWN_DOMAIN)).toMatchObject({ mode: "list" });
  });

  it("over reinject_budget_tokens the older skill is not carried, and a note says so; its allowance ends with it", async () => {
    const { w } = await compactedWorld(60);
    const main = mainRequests(w.double.requests);
    expect(main.length).toBeGreaterThan(0);
    const segments = [...(await readAllSegments(w.workspace)).values()];
    const compacted = compactedSegment(segments);
    const history = JSON.stringify((compacted[0] as { history: unknown }).history);
    expect(history).toContain("REVIEW-STEPS");
    expect(history).not.toContain("PDF-STEPS");
    expect(history).toContain("not carried over (over the budget of 60 tokens): pdf.");
    const loaded = compacted.find(
      (entry) => entry.kind === "extension" && entry.domain === SKILLS_LOADED_DOMAIN,
    );
    expect(loaded).toMatchObject({ payload: { active: [{ name: "review" }] } });
  });
});
