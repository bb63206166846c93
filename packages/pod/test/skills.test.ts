import { createHash } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CapturedRequest } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { SkillDefinitionError, SkillListingOverBudgetError } from "../src/skills/errors.js";
import { SKILLS_KNOWN_DOMAIN, SKILLS_LOADED_DOMAIN } from "../src/skills/skill-records.js";
import { caught } from "./helpers.js";
import {
  kinds,
  sessionEntries,
  systemOf,
  text,
  toolCall,
  usePodWorlds,
  type WorldSetup,
} from "./pod-harness.js";
import { writeSkill, writeSkills } from "./support/skills.js";

const world = usePodWorlds();

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of an Anthropic request body.
type Body = any;
const bodyOf = (request: CapturedRequest | undefined): Body => request?.body ?? {};
/** What of a request is the cached prefix's head: the system prompt and the tools array, as sent. */
const prefixOf = (request: CapturedRequest) =>
  JSON.stringify([(request.body as Body).system, (request.body as Body).tools]);
const toolNamesOf = (request: CapturedRequest) =>
  ((request.body as Body).tools as { name: string }[]).map((tool) => tool.name);
/** The text of the last tool result a request carries. */
const lastToolResult = (request: CapturedRequest): string => {
  const parts = ((request.body as Body).messages as Body[]).flatMap((m) =>
    Array.isArray(m.content) ? m.content : [],
  );
  const result = parts.filter((part: Body) => part.type === "tool_result").at(-1);
  return typeof result?.content === "string" ? result.content : JSON.stringify(result?.content);
};

const SKILLS = "project/.podkit/skills";
const skillsWorld = (setup: WorldSetup & { skills?: string } = {}) =>
  world({
    systemPrompt: '{% include "$podkit/default" %}',
    ...setup,
    manifestExtra: `[skills]\n${setup.skills ?? ""}\n${setup.manifestExtra ?? ""}`,
  });

describe("the skill listing", () => {
  it("is rendered once with the system prompt, in name order, and every request sends it byte-identically", async () => {
    const w = await skillsWorld();
    const dir = join(w.root, SKILLS);
    await writeSkill(dir, { name: "pdf", description: "Fill PDF forms." });
    await writeSkill(dir, { name: "code-review", description: "Review a diff." });
    const pod = await w.pod();
    w.double.enqueue(toolCall("skill", { name: "pdf" }), text("done"), text("two"), text("three"));
    await pod.run("fill the form");
    // A description changed after the render does not reach the prompt (it is announced instead).
    await writeSkill(dir, { name: "code-review", description: "Review a diff, carefully." });
    await pod.run("again");
    await pod.run("and again");

    const prompt = pod.systemPrompt as string;
    const listing = pod.catalog.render("skills_listing", {
      skills: [
        { name: "code-review", description: "Review a diff." },
        { name: "pdf", description: "Fill PDF forms." },
      ],
    });
    expect(prompt).toContain(`\n\n${listing}\n\n## Language`);
    expect(listing.indexOf("- code-review: Review a diff.")).toBeLessThan(
      listing.indexOf("- pdf: Fill PDF forms."),
    );
    expect(w.double.requests).toHaveLength(4);
    expect(new Set(w.double.requests.map((r) => systemOf(r as never)))).toEqual(new Set([prompt]));
    expect(new Set(w.double.requests.map(prefixOf)).size).toBe(1);
    expect(toolNamesOf(w.double.requests[0] as CapturedRequest)).toContain("skill");
  });

  it("a pod without [skills] renders the default prompt as before: no listing, no skill tool", async () => {
    const w = await world({ systemPrompt: '{% include "$podkit/default" %}' });
    const pod = await w.pod();
    w.double.enqueue(text("hi"));
    await pod.run("hello");
    expect(pod.systemPrompt).not.toContain("## Skills");
    expect(pod.systemPrompt).toContain("\n\n## Language");
    expect(toolNamesOf(w.double.requests[0] as CapturedRequest)).not.toContain("skill");
  });

  it("over listing_budget_tokens the render fails with SkillListingOverBudgetError: nothing is sent or written", async () => {
    const w = await skillsWorld({ skills: "listing_budget_tokens = 300" });
    await writeSkills(join(w.root, SKILLS), 60);
    const pod = await w.pod();
    const error = await caught(pod.run("hello").result);
    expect(SkillListingOverBudgetError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(
      /^the skill listing of 60 skills is about \d+ tokens, over \[skills\] listing_budget_tokens = 300/,
    );
    expect((error as SkillListingOverBudgetError).tokens).toBeGreaterThan(300);
    expect(w.double.requests).toHaveLength(0);
    expect(pod.sessionId).toBeUndefined();
    // Control: the same skills under a budget they fit are listed whole.
    const roomy = await skillsWorld({ skills: "listing_budget_tokens = 20000" });
    await writeSkills(join(roomy.root, SKILLS), 60);
    expect(await (await roomy.pod()).renderSystemPrompt()).toContain("- skill-60: Handles topic 60");
  });

  it('on_over_budget = "search": a one-line note stands in for the listing, and the skill tool finds skills by query', async () => {
    const w = await skillsWorld({ skills: 'listing_budget_tokens = 300\non_over_budget = "search"' });
    await writeSkills(join(w.root, SKILLS), 60, (i) =>
      i === 42 ? { name: "invoice-pdf", description: "Fill invoice PDFs for accounting." } : {},
    );
    const pod = await w.pod();
    w.double.enqueue(
      toolCall("skill", { query: "invoice" }),
      toolCall("skill", { name: "invoice-pdf" }),
      text("done"),
    );
    await pod.run("bill the client");
    const prompt = pod.systemPrompt as string;
    expect(prompt).toContain(pod.catalog.render("skills_search_note", { count: 60 }));
    expect(prompt).not.toContain("skill-01");
    const tool = (bodyOf(w.double.requests[0]).tools as Body[]).find((t) => t.name === "skill");
    expect(Object.keys(tool.input_schema.properties)).toEqual(["query", "name", "file"]);
    expect(lastToolResult(w.double.requests[1] as CapturedRequest)).toContain(
      "- invoice-pdf: Fill invoice PDFs",
    );
    expect(lastToolResult(w.double.requests[2] as CapturedRequest)).toContain("Step 1 for topic 42.");
  });

  it("a bad SKILL.md fails the render with SkillDefinitionError naming the file, line and key", async () => {
    const w = await skillsWorld();
    await writeSkill(join(w.root, SKILLS), { name: "fine", description: "x" });
    const broken = await writeSkill(join(w.root, SKILLS), { name: "broken", description: "x" });
    await writeFile(join(broken, "SKILL.md"), "---\nname: broken\n---\nbody\n");
    const pod = await w.pod();
    const error = await caught(pod.run("hello").result);
    expect(SkillDefinitionError.isInstance(error)).toBe(true);
    expect((error as SkillDefinitionError).file).toBe(join(w.root, SKILLS, "broken", "SKILL.md"));
    expect(error.message).toContain("SKILL.md:1: description: missing");
    expect(w.double.requests).toHaveLength(0);
  });
});

describe("the skill tool", () => {
  it("returns the body and the bundled files, and the log records the SKILL.md's digest before the result", async () => {
    const w = await skillsWorld();
    const dir = await writeSkill(join(w.root, SKILLS), {
      name: "pdf",
      description: "Fill PDF forms.",
      body: "# PDF\nRun scripts/fill.py with the form's path.",
      files: { "scripts/fill.py": "print('filled')\n", "reference.md": "field names" },
    });
    const pod = await w.pod();
    w.double.enqueue(
      toolCall("skill", { name: "pdf" }, "toolu_body"),
      toolCall("skill", { name: "pdf", file: "reference.md" }, "toolu_file"),
      text("done"),
    );
    await pod.run("fill the form");

    const body = lastToolResult(w.double.requests[1] as CapturedRequest);
    expect(body).toBe(
      pod.catalog.render("skill_loaded", {
        name: "pdf",
        directory: ".podkit/skills/pdf",
        body: "# PDF\nRun scripts/fill.py with the form's path.",
        files: ["reference.md", "scripts/fill.py"],
        files_omitted: 0,
      }),
    );
    expect(lastToolResult(w.double.requests[2] as CapturedRequest)).toBe(
      "pdf/reference.md (11 bytes)\n\nfield names",
    );

    const entries = await sessionEntries(w.workspace);
    const digest = `sha256:${createHash("sha256")
      .update(await readFile(join(dir, "SKILL.md")))
      .digest("hex")}`;
    const loads = entries.filter((e) => e.kind === "extension" && e.domain === SKILLS_LOADED_DOMAIN);
    expect(loads.map((e) => (e.kind === "extension" ? e.payload : undefined))).toEqual([
      {
        call_id: "toolu_body",
        name: "pdf",
        digest,
        path: ".podkit/skills/pdf/SKILL.md",
        allowed_tools: [],
        active: [{ name: "pdf", digest, allowed_tools: [], writable: false }],
      },
      {
        call_id: "toolu_file",
        name: "pdf",
        digest,
        path: ".podkit/skills/pdf/SKILL.md",
        file: "reference.md",
        file_digest: `sha256:${createHash("sha256").update("field names").digest("hex")}`,
        active: [{ name: "pdf", digest, allowed_tools: [], writable: false }],
      },
    ]);
    // Each load is committed right before its call's result.
    const at = entries.indexOf(loads[0] as never);
    expect(entries[at + 1]).toMatchObject({ kind: "tool_result", item: { call_id: "toolu_body" } });
    expect(entries.find((e) => e.kind === "extension" && e.domain === SKILLS_KNOWN_DOMAIN)).toMatchObject({
      payload: { mode: "list", skills: [{ name: "pdf", digest }] },
    });
  });

  it("refuses bundled paths that leave the skill's directory: .., absolute, a symbolic link out", async () => {
    const w = await skillsWorld();
    const dir = await writeSkill(join(w.root, SKILLS), {
      name: "pdf",
      description: "d",
      files: { "ok.txt": "fine" },
    });
    await writeSkill(join(w.root, SKILLS), {
      name: "other",
      description: "d",
      files: { "private.txt": "other's" },
    });
    await writeFile(join(w.workspace, "secret.txt"), "the secret");
    const { symlink } = await import("node:fs/promises");
    await symlink(join(w.workspace, "secret.txt"), join(dir, "leak.txt"));
    // Positive control: the link itself leads to the secret.
    expect(await readFile(join(dir, "leak.txt"), "utf8")).toBe("the secret");
    const pod = await w.pod();
    const attempts = ["../other/private.txt", join(w.workspace, "secret.txt"), "leak.txt", "ok.txt"];
    w.double.enqueue(...attempts.map((file) => toolCall("skill", { name: "pdf", file })), text("done"));
    await pod.run("read them");
    const results = attempts.map((_, i) => lastToolResult(w.double.requests[i + 1] as CapturedRequest));
    expect(results[0]).toContain("has an empty, . or .. segment");
    expect(results[1]).toContain("the path is absolute");
    expect(results[2]).toContain("it leads out of the skill's directory");
    for (const result of results.slice(0, 3)) {
      expect(result).not.toContain("the secret");
      expect(result).not.toContain("other's");
    }
    expect(results[3]).toBe("pdf/ok.txt (4 bytes)\n\nfine");
    const toolResults = (await sessionEntries(w.workspace)).filter((e) => e.kind === "tool_result");
    expect(
      toolResults.map((e) =>
        e.kind === "tool_result" && e.item.type === "tool_result" ? e.item.is_error : 0,
      ),
    ).toEqual([true, true, true, undefined]);
  });

  it("an unknown skill is an error result naming how to find skills", async () => {
    const w = await skillsWorld();
    await writeSkill(join(w.root, SKILLS), { name: "pdf", description: "d" });
    const pod = await w.pod();
    w.double.enqueue(toolCall("skill", { name: "nope" }), text("ok"));
    await pod.run("x");
    expect(lastToolResult(w.double.requests[1] as CapturedRequest)).toBe(
      pod.catalog.render("skill_refused_unknown", { name: "nope", mode: "list" }),
    );
  });
});

describe("on each wire", () => {
  it.each(["anthropic", "openai-responses", "openai-chat"] as const)(
    "%s: a skill is loaded, one is added mid-session, and the tools array never changes",
    async (wire) => {
      const w = await skillsWorld({ double: { wire } });
      const dir = join(w.root, SKILLS);
      await writeSkill(dir, { name: "pdf", description: "Fill PDF forms.", body: "PDF-STEPS" });
      const pod = await w.pod();
      w.double.enqueue(toolCall("skill", { name: "pdf" }), text("one"));
      await pod.run("first");
      await writeSkill(dir, { name: "docx", description: "Word files.", body: "DOCX-STEPS" });
      w.double.enqueue(toolCall("skill", { name: "docx" }), text("two"));
      await pod.run("second");
      expect(w.double.requests).toHaveLength(4);
      const tools = new Set(w.double.requests.map((r) => JSON.stringify(bodyOf(r).tools)));
      expect(tools.size).toBe(1);
      expect([...tools][0]).toContain('"skill"');
      const prompt = JSON.stringify(pod.systemPrompt).slice(1, -1);
      for (const request of w.double.requests) expect(request.rawBody).toContain(prompt);
      expect(w.double.requests[1]?.rawBody).toContain("PDF-STEPS");
      expect(w.double.requests[3]?.rawBody).toContain("DOCX-STEPS");
      expect(w.double.requests[2]?.rawBody).toContain("new skill docx: Word files.");
    },
  );
});

describe("skills changed during a session", () => {
  it("a skill added mid-session arrives as a notification and can be loaded; the system prompt and tools array stay byte-identical", async () => {
    const w = await skillsWorld();
    const dir = join(w.root, SKILLS);
    await writeSkill(dir, { name: "pdf", description: "Fill PDF forms." });
    const pod = await w.pod();
    w.double.enqueue(text("one"));
    await pod.run("first");
    await writeSkill(dir, {
      name: "changelog",
      description: "Write the changelog.",
      body: "Use keep-a-changelog.",
    });
    await writeSkill(dir, { name: "pdf", description: "Fill PDF forms, v2." });
    w.double.enqueue(toolCall("skill", { name: "changelog" }), text("two"), text("three"));
    await pod.run("write the changelog");
    await pod.run("third");

    expect(w.double.requests).toHaveLength(4);
    expect(new Set(w.double.requests.map(prefixOf)).size).toBe(1);
    expect(pod.systemPrompt).not.toContain("changelog");
    const notice = pod.catalog.render("skills_changed", {
      added: [{ name: "changelog", description: "Write the changelog." }],
      changed: [{ name: "pdf", description: "Fill PDF forms, v2.", loaded: false }],
      removed: [],
    });
    const second = JSON.stringify(bodyOf(w.double.requests[1]).messages);
    expect(second).toContain(JSON.stringify(notice).slice(1, -1));
    expect(lastToolResult(w.double.requests[2] as CapturedRequest)).toContain("Use keep-a-changelog.");
    // Announced once: the third turn carries no second notification.
    const entries = await sessionEntries(w.workspace);
    const notes = entries.filter((e) => e.kind === "system_item" && e.item.kind === "notification");
    expect(notes).toHaveLength(1);
    expect(kinds(entries).filter((kind) => kind === "extension")).toHaveLength(3);
  });

  it("a skill removed, or broken, mid-session: removal is announced, a broken one is a warning and stays as known", async () => {
    const warnings: string[] = [];
    const w = await skillsWorld();
    const dir = join(w.root, SKILLS);
    await writeSkill(dir, { name: "pdf", description: "d" });
    await writeSkill(dir, { name: "docx", description: "d" });
    const pod = await w.pod({ onWarning: (warning) => warnings.push(`${warning.code}: ${warning.message}`) });
    w.double.enqueue(text("one"), text("two"));
    await pod.run("first");
    await rm(join(dir, "docx"), { recursive: true });
    await writeFile(join(dir, "pdf", "SKILL.md"), "---\nname: pdf\n---\n");
    await pod.run("second");
    const second = JSON.stringify(bodyOf(w.double.requests[1]).messages);
    expect(second).toContain("- docx was removed");
    expect(second).not.toContain("pdf was removed");
    expect(warnings.filter((warning) => warning.startsWith("pod.skills:"))).toEqual([
      expect.stringContaining("pdf/SKILL.md:1: description: missing"),
    ]);
  });
});
