import { mkdir, readdir, readFile, realpath, rename, stat, symlink, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { Tool } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { runMemoryConsolidation } from "../src/consolidate/run-consolidation.js";
import { MemoryFileRefusedError } from "../src/errors.js";
import { writeStagingEntry } from "../src/extract/staging.js";
import { memoryPaths } from "../src/records/layout.js";
import { ContainedDir } from "../src/store/contained-dir.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { consolidationTools } from "../src/tools/memory-tools.js";
import { clock, decision, record, useMemoryWorlds, useTempDirs, writeFiles } from "./helpers.js";

// A cloned repository can ship `.podkit/memory/decisions`, `.podkit/knowledge`, the staging or
// the log directory as a symbolic link to anywhere. Memory must write exactly where it reads:
// only inside `.podkit`, never creating or replacing anything through a link that leads out.
const tempDir = useTempDirs();
const world = useMemoryWorlds();

const REQUEST = record("sources: [{segment_id: seg-0, range: [1, 2]}]", "Answer in English.");
const KNOWLEDGE = record(
  "kind: fact\ndescription: The registry mirror; use when installing.\nlast_sources: []",
  "Use the mirror.",
);
const STAGED = {
  created_at: "2026-04-15T09:00:00Z",
  session_id: "s1",
  source: { segment_id: "seg-1", range: [1, 4] as [number, number] },
  decisions: [],
  discussions: [],
  attempts: [],
  requests: [{ topic: "answer language", request: "Answer in English" }],
};

/** Every file under `dir` with its content: what "nothing changed outside" is compared on. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (at: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else out[relative(dir, path)] = await readFile(path, "utf8");
    }
  };
  await walk(dir);
  return out;
}

/** A workspace and an outside directory that already holds a file; `link` names what is linked out. */
async function linkedOut(link: string) {
  const base = await tempDir("contained");
  const workspace = join(base, "ws");
  const outside = join(base, "outside");
  await writeFiles(base, {
    "outside/answer-in-english.md": "OUTSIDE FILE, must stay as it is",
    "ws/.podkit/memory/.keep": "",
  });
  await mkdir(join(workspace, link, ".."), { recursive: true });
  await symlink(outside, join(workspace, link));
  return { workspace, outside, before: await snapshot(outside) };
}

const call = (tools: Tool[], name: string, args: Record<string, unknown>) =>
  (tools.find((t) => t.name === name) as Tool).execute(args, {
    signal: new AbortController().signal,
    callId: "c",
  });
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe("memory writes stay inside .podkit (positive control first)", () => {
  it("without protection, a write through the linked directory lands outside", async () => {
    const { workspace, outside } = await linkedOut(".podkit/memory/requests");
    await writeFile(
      join(workspace, ".podkit/memory/requests/answer-in-english.md"),
      "written through the link",
    );
    expect(await readFile(join(outside, "answer-in-english.md"), "utf8")).toBe("written through the link");
  });

  for (const [link, kind, content] of [
    [".podkit/memory/requests", "request", REQUEST],
    [".podkit/memory/decisions", "decision", decision()],
    [".podkit/knowledge", "knowledge", KNOWLEDGE],
  ] as const) {
    it(`${link} linked outside: memory_write refuses with one clear error; 0 files created or changed outside`, async () => {
      const { workspace, outside, before } = await linkedOut(link);
      const store = await MemoryStore.open(workspace, { clock });
      const tools = consolidationTools(store);
      // Over the existing outside file (not in the index: reads refused it) and as a new file.
      for (const [slug, overwrite] of [
        ["answer-in-english", true],
        ["brand-new", false],
      ] as const) {
        const out = await call(tools, "memory_write", { kind, slug, content, reason: "r", overwrite });
        expect(out.is_error).toBe(true);
        expect(out.summary).toContain(
          `memory file not written: ${link} resolves to ${await realpath(outside)}`,
        );
        expect(store.get(kind, slug)).toBeUndefined();
      }
      expect(await snapshot(outside)).toEqual(before);
    });
  }

  it("a linked logs directory refuses the change before the record is written; a linked usage log only warns", async () => {
    const { workspace, outside, before } = await linkedOut(".podkit/memory/_logs");
    await writeFiles(workspace, { ".podkit/memory/decisions/d-one.md": decision() });
    const store = await MemoryStore.open(workspace, { clock });
    const tools = consolidationTools(store);
    const out = await call(tools, "memory_write", {
      kind: "request",
      slug: "r-one",
      content: REQUEST,
      reason: "r",
    });
    expect(out.summary).toContain("memory file not written: .podkit/memory/_logs resolves to");
    await expect(stat(join(workspace, ".podkit/memory/requests/r-one.md"))).rejects.toThrow();
    expect(await snapshot(outside)).toEqual(before);

    const usage = await linkedOut(".podkit/memory/_usage");
    await writeFiles(usage.workspace, { ".podkit/memory/decisions/d-one.md": decision() });
    const reader = consolidationTools(await MemoryStore.open(usage.workspace, { clock }));
    const read = await call(reader, "memory_read", { kind: "decision", slug: "d-one" });
    expect(read.is_error).toBeUndefined();
    expect(read.summary).toContain(
      "warning: usage not recorded: memory file not written: .podkit/memory/_usage",
    );
    expect(await snapshot(usage.outside)).toEqual(usage.before);
  });

  it("a linked staging directory: no staging file, no lock, one clear error", async () => {
    const { workspace, outside, before } = await linkedOut(".podkit/memory/_staging");
    const paths = memoryPaths(workspace);
    const staged = await caught(writeStagingEntry(paths, STAGED));
    expect(MemoryFileRefusedError.isInstance(staged)).toBe(true);
    expect((staged as Error).message).toContain(".podkit/memory/_staging resolves to");
    const w = await world();
    const consolidation = await caught(runMemoryConsolidation({ ...w.job({ workspace }), force: true }));
    expect(MemoryFileRefusedError.isInstance(consolidation)).toBe(true);
    expect(w.double.requests).toEqual([]);
    expect(await snapshot(outside)).toEqual(before);
  });

  it("a record file linked outside is refused on write; one linked inside .podkit is written where it leads", async () => {
    const base = await tempDir("file-links");
    const workspace = join(base, "ws");
    await writeFiles(base, {
      "outside/secret.md": "OUTSIDE",
      "ws/.podkit/memory/requests/.keep": "",
      "ws/.podkit/shared/answer-in-english.md": REQUEST,
    });
    await symlink(join(base, "outside/secret.md"), join(workspace, ".podkit/memory/requests/leak.md"));
    await symlink(
      join(workspace, ".podkit/shared/answer-in-english.md"),
      join(workspace, ".podkit/memory/requests/answer-in-english.md"),
    );
    const store = await MemoryStore.open(workspace, { clock });
    const tools = consolidationTools(store);
    const leak = await call(tools, "memory_write", {
      kind: "request",
      slug: "leak",
      content: REQUEST,
      reason: "r",
      overwrite: true,
    });
    expect(leak.summary).toContain(".podkit/memory/requests/leak.md is a symbolic link to");
    expect(await readFile(join(base, "outside/secret.md"), "utf8")).toBe("OUTSIDE");
    const shared = await call(tools, "memory_edit", {
      kind: "request",
      slug: "answer-in-english",
      old_text: "Answer in English.",
      new_text: "Answer in English, always.",
      reason: "r",
    });
    expect(shared.is_error).toBeUndefined();
    expect(await readFile(join(workspace, ".podkit/shared/answer-in-english.md"), "utf8")).toContain(
      "always.",
    );
  });
});

describe("a component swapped for a symlink between the check and the write", () => {
  async function swapLayout() {
    const base = await tempDir("swap");
    const workspace = join(base, "ws");
    const outside = join(base, "outside");
    await writeFiles(base, { "outside/.keep": "", "ws/.podkit/memory/requests/.keep": "" });
    const dir = join(workspace, ".podkit/memory/requests");
    const swap = async () => {
      await rename(dir, `${dir}-moved`);
      await symlink(outside, dir);
    };
    return { workspace, outside, dir, swap };
  }

  it("positive control: a path checked with realpath, then written, follows the swapped-in link outside", async () => {
    const { workspace, outside, dir, swap } = await swapLayout();
    const checked = await realpath(dir);
    expect(checked.startsWith(await realpath(join(workspace, ".podkit")))).toBe(true);
    await swap();
    await writeFile(join(dir, "r-one.md"), REQUEST);
    expect(await readdir(outside)).toContain("r-one.md");
  });

  it("a write through the opened directory goes where it was checked, never outside", async () => {
    const { workspace, outside, dir, swap } = await swapLayout();
    const opened = await ContainedDir.open(workspace, dir);
    if (opened === undefined) throw new Error("the directory exists");
    try {
      await swap();
      await opened.writeAtomic("r-one.md", REQUEST);
      await opened.append("log.jsonl", "{}\n");
    } finally {
      await opened.close();
    }
    expect(await readdir(outside)).toEqual([".keep"]);
    expect((await readdir(`${dir}-moved`)).sort()).toEqual([".keep", "log.jsonl", "r-one.md"]);
    // The next open checks again and refuses the link.
    const again = await caught(ContainedDir.open(workspace, dir));
    expect(MemoryFileRefusedError.isInstance(again)).toBe(true);
  });
});
