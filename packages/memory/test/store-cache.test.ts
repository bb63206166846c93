import { readFile, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { lintTree, lintTreeYielding } from "../src/lint/lint-memory.js";
import { lintRecord } from "../src/lint/lint-record.js";
import { memoryPaths } from "../src/records/layout.js";
import { loadMemoryFiles } from "../src/store/load-memory-files.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { cachedMemoryStore } from "../src/store/store-cache.js";
import { clock, record, useTempDirs, writeFiles } from "./helpers.js";

const tempDir = useTempDirs();
const REQUESTS = ".podkit/memory/requests";
const STAMPS =
  "created_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-01T10:00:00Z\nsources: [{segment_id: seg-0, range: [1, 2]}]";

const SOURCES = "sources: [{segment_id: seg-0, range: [1, 2]}]";

/** An editor saving in place: same inode and size, a later mtime. */
async function editInPlace(workspace: string, slug: string): Promise<void> {
  const file = join(workspace, REQUESTS, `${slug}.md`);
  const text = await readFile(file, "utf8");
  await writeFile(file, text.replace("Request 0", "Request X"));
  const later = new Date((await stat(file)).mtimeMs + 5_000);
  await utimes(file, later, later);
}

async function workspaceWith(count: number): Promise<string> {
  const workspace = await tempDir("cache");
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++)
    files[`${REQUESTS}/request-${i}.md`] = record(STAMPS, `Request ${i}, see #request-${(i + 1) % count}.`);
  await writeFiles(workspace, files);
  return workspace;
}

describe("the main worker's cached memory store", () => {
  it("is loaded once and reused while no record file changed", async () => {
    const workspace = await workspaceWith(3);
    const source = cachedMemoryStore(workspace, { clock });
    const first = await source();
    expect(await source()).toBe(first);
    expect(await source()).toBe(first);
    expect(first.list("request")).toHaveLength(3);
  });

  it("is reloaded after another store writes, a file is edited in place (at the next sweep), or one is deleted", async () => {
    const workspace = await workspaceWith(3);
    const source = cachedMemoryStore(workspace, { clock }, { sweepIntervalMs: 0 });
    const first = await source();

    const other = await MemoryStore.open(workspace, { clock });
    await other.write("request", "answer-in-english", record(SOURCES, "Answer in English."), "r");
    const second = await source();
    expect(second).not.toBe(first);
    expect(second.read("request", "answer-in-english")).toContain("Answer in English.");

    await editInPlace(workspace, "request-0");
    const third = await source();
    expect(third).not.toBe(second);
    expect(third.read("request", "request-0")).toContain("Request X");

    await unlink(join(workspace, REQUESTS, "request-1.md"));
    expect((await source()).get("request", "request-1")).toBeUndefined();
  });

  it("a warm call costs no sweep of the record files: memory writes and added files are seen at once, edits in place only at the next sweep", async () => {
    const workspace = await workspaceWith(3);
    const source = cachedMemoryStore(workspace, { clock }, { sweepIntervalMs: 60 * 60_000 });
    const first = await source();
    // Same inode, same size, a later mtime: only a file-by-file sweep could see it, and none runs.
    await editInPlace(workspace, "request-0");
    expect(await source()).toBe(first);
    // A memory writer bumps the stamp file: the next call reloads (and sees the edit too).
    const other = await MemoryStore.open(workspace, { clock });
    await other.write("request", "answer-in-english", record(SOURCES, "Answer in English."), "r");
    const second = await source();
    expect(second).not.toBe(first);
    expect(second.read("request", "request-0")).toContain("Request X");
    // A person adding a record changes its directory.
    await writeFiles(workspace, { [`${REQUESTS}/added-by-hand.md`]: record(STAMPS, "By hand.") });
    expect((await source()).get("request", "added-by-hand")).toBeDefined();
  });

  it("ignores staging, usage and audit writes (they are not records)", async () => {
    const workspace = await workspaceWith(2);
    const source = cachedMemoryStore(workspace, { clock, by: "pod" });
    const first = await source();
    await first.noteUsage("used", "request", "request-0");
    await writeFiles(workspace, { ".podkit/memory/_staging/x.json": "{}" });
    expect(await source()).toBe(first);
  });
});

describe("whole-tree passes return to the event loop", () => {
  it("the checks between records pause between records, with the same report as the plain linter", async () => {
    const workspace = await workspaceWith(50);
    const results = (await loadMemoryFiles(memoryPaths(workspace))).map((file) => ({
      file,
      ...lintRecord(file),
    }));
    let pauses = 0;
    const report = await lintTreeYielding(results, async () => {
      pauses++;
      await nextTurn();
    });
    expect(pauses).toBe(50);
    expect(report).toEqual(lintTree(results));
  });
});
