import { mkdir, mkdtemp, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextSectionState } from "./context-section.js";
import { createNotesSection } from "./notes-section.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** Past a coarse file-clock tick, so the next change gets a new time. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 25));

async function workspace(): Promise<{ root: string; workspace: string }> {
  const root = await mkdtemp(join(tmpdir(), "podkit-notes-"));
  roots.push(root);
  const ws = join(root, "project");
  await mkdir(join(ws, ".podkit"), { recursive: true });
  return { root, workspace: ws };
}

const stateOf = (ws: string): ContextSectionState => ({
  workspace: ws,
  sessionId: undefined,
  segmentId: undefined,
  turn: 0,
  extensions: new Map(),
  signal: new AbortController().signal,
});

describe("the notes section re-reads NOTES.md only when its files changed", () => {
  it("sees every change after a trusted, unchanged read: new text, creation, a link outside, removal", async () => {
    const { root, workspace: ws } = await workspace();
    const warnings: string[] = [];
    const section = createNotesSection(
      await PromptCatalog.loadBuiltinOnly(),
      (message) => warnings.push(message),
      { racyMarginMs: 0 },
    );
    const state = stateOf(ws);
    const notes = join(ws, ".podkit/NOTES.md");

    await tick();
    expect(await section.load(state)).toBeNull();
    expect(await section.load(state)).toBeNull(); // served from the stamp of the absent file
    await writeFile(notes, "first");
    await tick();
    expect(await section.load(state)).toBe("first");
    expect(await section.load(state)).toBe("first");
    await writeFile(notes, "second, longer");
    await tick();
    expect(await section.load(state)).toBe("second, longer");

    await writeFile(join(root, "secret.txt"), "SECRET");
    await unlink(notes);
    await symlink(join(root, "secret.txt"), notes);
    await tick();
    expect(await section.load(state)).toBeNull();
    expect(warnings).toEqual([expect.stringContaining(".podkit/NOTES.md is refused and not read")]);

    await unlink(notes);
    await tick();
    expect(await section.load(state)).toBeNull();
    await writeFile(notes, "back");
    await tick();
    expect(await section.load(state)).toBe("back");
  });

  it("does not trust a stamp taken right after a change (file times are coarse)", async () => {
    const { workspace: ws } = await workspace();
    const section = createNotesSection(await PromptCatalog.loadBuiltinOnly(), () => {});
    const state = stateOf(ws);
    const notes = join(ws, ".podkit/NOTES.md");
    await writeFile(notes, "aaaa");
    expect(await section.load(state)).toBe("aaaa");
    await writeFile(notes, "bbbb"); // same size, maybe the same file time
    expect(await section.load(state)).toBe("bbbb");
  });

  it("a .podkit replaced by a link outside the workspace is refused even when NOTES.md was absent", async () => {
    const { root, workspace: ws } = await workspace();
    const warnings: string[] = [];
    const section = createNotesSection(
      await PromptCatalog.loadBuiltinOnly(),
      (message) => warnings.push(message),
      { racyMarginMs: 0 },
    );
    const state = stateOf(ws);
    await tick();
    expect(await section.load(state)).toBeNull();
    await mkdir(join(root, "elsewhere"));
    await writeFile(join(root, "elsewhere/NOTES.md"), "SECRET");
    await rm(join(ws, ".podkit"), { recursive: true });
    await symlink(join(root, "elsewhere"), join(ws, ".podkit"));
    await tick();
    expect(await section.load(state)).toBeNull();
    expect(warnings).toEqual([expect.stringContaining("is refused and not read")]);
  });
});
