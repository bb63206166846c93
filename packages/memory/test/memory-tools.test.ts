import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Tool } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { memoryPaths } from "../src/records/layout.js";
import { readAuditLog } from "../src/store/audit-log.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { usageReport } from "../src/store/usage-log.js";
import { consolidationTools } from "../src/tools/memory-tools.js";
import { clock, decision, record, useTempDirs, writeFiles } from "./helpers.js";

const tempDir = useTempDirs();

async function setup(files: Record<string, string> = {}) {
  const workspace = await tempDir("tools");
  await writeFiles(workspace, files);
  const store = await MemoryStore.open(workspace, { clock });
  const tools = Object.fromEntries(consolidationTools(store).map((t) => [t.name, t])) as Record<string, Tool>;
  const call = async (name: string, args: Record<string, unknown>) =>
    (tools[name] as Tool).execute(args, { signal: new AbortController().signal, callId: "c1" });
  return {
    workspace,
    store,
    call,
    audit: () => readAuditLog(memoryPaths(workspace)),
  };
}

const DECISIONS = ".podkit/memory/decisions";
const requestText = record("sources: [{segment_id: seg-0, range: [1, 2]}]", "Answer in English.");

describe("memory tools, addressed by kind and slug", () => {
  it("memory_read numbers lines and pages with offset/limit; a read is a `used` event", async () => {
    const { call, workspace } = await setup({
      [`${DECISIONS}/d-one.md`]: decision("status: open", "line a\nline b\nline c"),
    });
    const all = await call("memory_read", { kind: "decision", slug: "d-one" });
    expect(all.content?.split("\n")[0]).toBe("1\t---");
    expect(all.content).toContain("\tline b");
    const page = await call("memory_read", { kind: "decision", slug: "d-one", offset: 8, limit: 1 });
    expect(page.content).toBe("8\tline a\n(2 more lines; use offset)");
    const missing = await call("memory_read", { kind: "decision", slug: "d-ghost" });
    expect(missing).toMatchObject({
      is_error: true,
      summary: expect.stringContaining('no decision record "d-ghost"'),
    });
    expect(await usageReport(memoryPaths(workspace))).toEqual([
      { kind: "decision", slug: "d-one", used: 2, shown: 0 },
    ]);
  });

  it("memory_write creates, stamps the timestamps, writes canonically, and audits with hashes", async () => {
    const { call, workspace, audit } = await setup();
    const out = await call("memory_write", {
      kind: "request",
      slug: "answer-in-english",
      content: requestText,
      reason: "user asked twice",
    });
    expect(out).toEqual({ summary: "created .podkit/memory/requests/answer-in-english.md" });
    const text = await readFile(join(workspace, ".podkit/memory/requests/answer-in-english.md"), "utf8");
    expect(text).toBe(
      "---\ncreated_at: 2026-04-15T09:30:00Z\nupdated_at: 2026-04-15T09:30:00Z\nsources:\n  - segment_id: seg-0\n    range: [1, 2]\n---\n\nAnswer in English.\n",
    );
    expect(await audit()).toEqual([
      expect.objectContaining({
        op: "create",
        kind: "request",
        slug: "answer-in-english",
        status: "applied",
        before_hash: null,
        after_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        reason: "user asked twice",
      }),
    ]);
  });

  it("memory_write over an existing slug steers to memory_edit; overwrite: true replaces it", async () => {
    const { call, store } = await setup({ [`${DECISIONS}/d-one.md`]: decision() });
    const refused = await call("memory_write", {
      kind: "decision",
      slug: "d-one",
      content: decision("status: resolved"),
      reason: "r",
    });
    expect(refused.is_error).toBe(true);
    expect(refused.summary).toContain("memory_edit");
    expect(store.get("decision", "d-one")?.frontmatter.status).toBe("open");
    await call("memory_write", {
      kind: "decision",
      slug: "d-one",
      content: decision("status: resolved"),
      reason: "r",
      overwrite: true,
    });
    expect(store.get("decision", "d-one")?.frontmatter).toMatchObject({
      status: "resolved",
      created_at: "2026-04-01T10:00:00Z",
    });
  });

  it("memory_write rewrites the model_invokation spelling to model_invocation", async () => {
    const { call, workspace } = await setup();
    const content = record(
      "kind: fact\ndescription: The registry mirror; use when installing.\nmodel_invokation: true\nlast_sources: []",
      "Use the mirror.",
    );
    const out = await call("memory_write", {
      kind: "knowledge",
      slug: "registry-mirror",
      content,
      reason: "r",
    });
    expect(out.summary).toContain("model_invokation");
    const text = await readFile(join(workspace, ".podkit/knowledge/registry-mirror.md"), "utf8");
    expect(text).toContain("model_invocation: true");
    expect(text).not.toContain("model_invokation");
  });

  it("memory_edit replaces exactly one occurrence, or all with replace_all, and lints the result", async () => {
    const { call, store, workspace } = await setup({
      [`${DECISIONS}/d-one.md`]: decision("status: open", "alpha beta alpha"),
    });
    expect(
      (
        await call("memory_edit", {
          kind: "decision",
          slug: "d-one",
          old_text: "alpha",
          new_text: "x",
          reason: "r",
        })
      ).summary,
    ).toContain("occurs 2 times");
    expect(
      (
        await call("memory_edit", {
          kind: "decision",
          slug: "d-one",
          old_text: "gamma",
          new_text: "x",
          reason: "r",
        })
      ).summary,
    ).toContain("not found");
    await call("memory_edit", {
      kind: "decision",
      slug: "d-one",
      old_text: "alpha",
      new_text: "omega",
      replace_all: true,
      reason: "r",
    });
    expect(store.get("decision", "d-one")?.body).toBe("omega beta omega");
    const before = await readFile(join(workspace, DECISIONS, "d-one.md"), "utf8");
    const bad = await call("memory_edit", {
      kind: "decision",
      slug: "d-one",
      old_text: "status: open",
      new_text: "status: finished",
      reason: "r",
    });
    expect(bad).toMatchObject({ is_error: true, summary: expect.stringContaining("status") });
    expect(await readFile(join(workspace, DECISIONS, "d-one.md"), "utf8")).toBe(before);
  });

  it("memory_delete refuses to leave a dangling replaced_by, then deletes", async () => {
    const { call, workspace, audit } = await setup({
      [`${DECISIONS}/d-old.md`]: decision("status: replaced\nreplaced_by: d-new"),
      [`${DECISIONS}/d-new.md`]: decision("status: resolved"),
    });
    const refused = await call("memory_delete", { kind: "decision", slug: "d-new", reason: "r" });
    expect(refused).toMatchObject({ is_error: true, summary: expect.stringContaining('"d-old"') });
    expect(existsSync(join(workspace, DECISIONS, "d-new.md"))).toBe(true);
    await call("memory_delete", { kind: "decision", slug: "d-old", reason: "superseded long ago" });
    expect(existsSync(join(workspace, DECISIONS, "d-old.md"))).toBe(false);
    expect((await audit()).map((a) => [a.op, a.slug, a.status, a.after_hash])).toEqual([
      ["delete", "d-new", "rejected", expect.any(String)],
      ["delete", "d-old", "applied", null],
    ]);
  });

  it("memory_query searches case-insensitively with context lines, a kind filter and a limit", async () => {
    const { call } = await setup({
      [`${DECISIONS}/d-one.md`]: decision("status: open", "one\nUse PNPM here\nthree"),
      [`${DECISIONS}/d-two.md`]: decision("status: open", "pnpm again"),
      ".podkit/memory/requests/r-one.md": record(
        "created_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-01T10:00:00Z\nsources: [{segment_id: seg-0, range: [1, 2]}]",
        "pnpm please",
      ),
    });
    const all = await call("memory_query", { query: "pnpm" });
    expect(all.summary).toBe('3 records match "pnpm"');
    expect(all.content).toContain("8-\tone\n9:\tUse PNPM here\n10-\tthree");
    expect((await call("memory_query", { query: "pnpm", kind: "request" })).summary).toBe(
      '1 record matches "pnpm"',
    );
    expect((await call("memory_query", { query: "pnpm", limit: 1 })).summary).toBe('1 record matches "pnpm"');
    expect((await call("memory_query", { query: "yarn" })).summary).toBe('no record contains "yarn"');
  });

  it("knowledge_query searches slug, description, kind and body and reports model_invocation", async () => {
    const k = (desc: string, body: string, extra = "") =>
      record(
        `created_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-01T10:00:00Z\nkind: howto\ndescription: ${desc}\n${extra}last_sources: []`,
        body,
      );
    const { call } = await setup({
      ".podkit/knowledge/workspace-layout.md": k(
        "Where packages live; use when adding one.",
        "packages/<name>",
      ),
      ".podkit/knowledge/release-steps.md": k(
        "How to release.",
        "Run changesets for the workspace.",
        "model_invocation: true\n",
      ),
    });
    const hits = JSON.parse((await call("knowledge_query", { query: "workspace" })).content ?? "[]");
    // One field each (a slug word, a body word): equal scores, slug order.
    expect(hits.map((h: { slug: string; score: number }) => [h.slug, h.score])).toEqual([
      ["release-steps", 1],
      ["workspace-layout", 1],
    ]);
    expect(hits.find((h: { slug: string }) => h.slug === "release-steps")).toMatchObject({
      kind: "howto",
      model_invocation: true,
    });
    expect((await call("knowledge_query", { query: "howto release" })).summary).toBe(
      '1 knowledge entry matches "howto release"',
    );
  });
});
