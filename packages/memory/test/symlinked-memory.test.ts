import { readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import type { Pod } from "@podkit/pod";
import { describe, expect, it } from "vitest";
import { MemoryFileRefusedError } from "../src/errors.js";
import { attachMemory } from "../src/pod/attach-memory.js";
import { memoryContextSection } from "../src/pod/memory-section.js";
import { MEMORY_FILE_MAX_BYTES } from "../src/store/contained-read.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { consolidationTools } from "../src/tools/memory-tools.js";
import { lintWorkspaceMemory } from "../src/workspace-api.js";
import { clock, decision, record, say, useTempDirs, writeFiles } from "./helpers.js";
import { usePodWorlds } from "./pod-helpers.js";

// A cloned repository can ship `.podkit/memory/summary.md`, a record or a whole memory directory
// as a symbolic link to anywhere on the machine; memory must read only what lies inside `.podkit`.
const tempDir = useTempDirs();
const world = usePodWorlds();
const SECRET = "SECRET-OUTSIDE-THE-WORKSPACE";
const prompts = {
  render: (_key: string, vars: object) => `MEMORY: ${String((vars as { summary?: string }).summary)}`,
};

/** A workspace and, beside it, an outside directory holding secret files shaped like records. */
async function layout() {
  const base = await tempDir("links");
  const workspace = join(base, "ws");
  const outside = join(base, "outside");
  await writeFiles(base, {
    "ws/README.md": "a cloned repository",
    "outside/summary.md": record("updated_at: 2026-04-01T10:00:00Z", SECRET),
    "outside/decision.md": decision("status: open", SECRET),
    "ws/.podkit/notes/summary.md": record("updated_at: 2026-04-01T10:00:00Z", "Inside the workspace."),
  });
  return { base, workspace, outside };
}

const loadSection = async (workspace: string) =>
  memoryContextSection(workspace, prompts, { clock }).load(undefined);
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe("memory files linked out of `.podkit`", () => {
  it("a link to an outside file really leads to the secret (positive control), and a link inside .podkit is read", async () => {
    const { workspace, outside } = await layout();
    await writeFiles(workspace, { ".podkit/memory/.keep": "" });
    await symlink(join(outside, "summary.md"), join(workspace, ".podkit/memory/summary.md"));
    expect(await readFile(join(workspace, ".podkit/memory/summary.md"), "utf8")).toContain(SECRET);

    const inside = await tempDir("inside");
    await writeFiles(inside, {
      ".podkit/notes/summary.md": record("updated_at: 2026-04-01T10:00:00Z", "Shared notes."),
    });
    await writeFiles(inside, { ".podkit/memory/.keep": "" });
    await symlink(join(inside, ".podkit/notes/summary.md"), join(inside, ".podkit/memory/summary.md"));
    expect(await loadSection(inside)).toEqual({ summary: "Shared notes.", knowledge: [] });
  });

  it("the summary section refuses a summary.md linked outside, naming the link and where it leads", async () => {
    const { workspace, outside } = await layout();
    await writeFiles(workspace, { ".podkit/memory/.keep": "" });
    await symlink(join(outside, "summary.md"), join(workspace, ".podkit/memory/summary.md"));
    const error = await caught(loadSection(workspace));
    expect(MemoryFileRefusedError.isInstance(error), String(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain(".podkit/memory/summary.md resolves to");
    expect(message).toContain(join(outside, "summary.md"));
    expect(message).not.toContain(SECRET);
  });

  it("a `.podkit/memory` directory linked outside is refused as a whole", async () => {
    const { workspace, outside } = await layout();
    await symlink(outside, join(workspace, ".podkit/memory"));
    expect(MemoryFileRefusedError.isInstance(await caught(loadSection(workspace)))).toBe(true);
    const store = await MemoryStore.open(workspace, { clock });
    expect(JSON.stringify(store.list())).not.toContain(SECRET);
  });

  it("a record linked outside is not read: memory_read says why, the linter warns, nothing leaks", async () => {
    const { workspace, outside } = await layout();
    await writeFiles(workspace, { ".podkit/memory/decisions/.keep": "" });
    await symlink(join(outside, "decision.md"), join(workspace, ".podkit/memory/decisions/leak.md"));
    const store = await MemoryStore.open(workspace, { clock });
    expect(store.get("decision", "leak")).toBeUndefined();
    const read = consolidationTools(store).find((t) => t.name === "memory_read");
    const out = await read?.execute(
      { kind: "decision", slug: "leak" },
      { signal: new AbortController().signal, callId: "c" },
    );
    expect(out?.is_error).toBe(true);
    expect(out?.summary).toContain("resolves to");
    expect(JSON.stringify(out)).not.toContain(SECRET);

    const report = await lintWorkspaceMemory(workspace);
    expect(report.warnings).toMatchObject([
      {
        code: "refused",
        record: ".podkit/memory/decisions/leak.md",
        message: expect.stringContaining("outside"),
      },
    ]);
    expect(JSON.stringify(report)).not.toContain(SECRET);
  });

  it("a pod warns and never sends the outside summary to the model", async () => {
    const w = await world("[memory]\nextract_threshold = 1000000");
    const { outside } = await layout();
    await writeFiles(w.workspace, { ".podkit/memory/.keep": "" });
    await symlink(join(outside, "summary.md"), join(w.workspace, ".podkit/memory/summary.md"));
    const pod: Pod = await w.pod();
    attachMemory(pod, { clock });
    w.double.enqueue(say("hello"));
    await pod.run("hi").result;
    await pod.whenJobsIdle();
    expect(JSON.stringify(w.double.requests.map((r) => r.body))).not.toContain(SECRET);
    expect(w.warnings.map((warning) => JSON.stringify(warning))).toEqual([
      expect.stringContaining("memory file not read"),
    ]);
  });
});

describe("memory file size cap", () => {
  it("a summary larger than the cap is refused, not read", async () => {
    const workspace = await tempDir("big");
    await writeFiles(workspace, {
      ".podkit/memory/summary.md": record(
        "updated_at: 2026-04-01T10:00:00Z",
        "x".repeat(MEMORY_FILE_MAX_BYTES),
      ),
    });
    const error = await caught(loadSection(workspace));
    expect(MemoryFileRefusedError.isInstance(error), String(error)).toBe(true);
    expect((error as Error).message).toContain(`more than the ${MEMORY_FILE_MAX_BYTES}`);
  });
});
