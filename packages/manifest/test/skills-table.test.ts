import { symlink } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifest, ManifestError } from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

const MINIMAL = `[pod]\nname = "p"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`;

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
  await t.mkdir("proj/.podkit");
});
afterEach(async () => {
  await t.cleanup();
});

async function load(file: string, overlays: string[] = []) {
  return loadManifest({ file, overlays, env: t.env("proj") });
}

async function failure(promise: Promise<unknown>): Promise<ManifestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ManifestError.isInstance(error)) throw new Error(`expected a ManifestError, got ${String(error)}`);
  return error;
}

describe("[skills]", () => {
  it("is off without the table, and on with its defaults when present", async () => {
    expect((await load(await t.write("proj/a.toml", MINIMAL))).manifest.skills).toBeUndefined();
    const loaded = await load(await t.write("proj/b.toml", `${MINIMAL}[skills]\n`));
    expect(loaded.manifest.skills).toEqual({
      dirs: [t.path("proj/.podkit/skills")],
      listing_budget_tokens: 2000,
      on_over_budget: "error",
      reinject_budget_tokens: 8000,
      allow_tools: false,
    });
    expect(loaded.provenance.get("skills.allow_tools")).toMatchObject({ layer: { kind: "builtin" } });
    const off = await load(await t.write("proj/c.toml", `${MINIMAL}[skills]\nenabled = false\n`));
    expect(off.manifest.skills).toBeUndefined();
  });

  it("resolves dirs against the workspace (not the file), adds .claude/skills when asked, and takes a list of names", async () => {
    const file = await t.write(
      "proj/pods/pod.toml",
      `${MINIMAL}[skills]\ndirs = ["team/skills", ".podkit/skills"]\nclaude = true\nenabled = ["pdf", "code-review"]\nlisting_budget_tokens = 500\non_over_budget = "search"\nreinject_budget_tokens = 0\nallow_tools = true\n`,
    );
    expect((await load(file)).manifest.skills).toEqual({
      dirs: [t.path("proj/team/skills"), t.path("proj/.podkit/skills"), t.path("proj/.claude/skills")],
      only: ["pdf", "code-review"],
      listing_budget_tokens: 500,
      on_over_budget: "search",
      reinject_budget_tokens: 0,
      allow_tools: true,
    });
    const listed = await load(
      await t.write("proj/d.toml", `${MINIMAL}[skills]\ndirs = [".claude/skills"]\nclaude = true\n`),
    );
    expect(listed.manifest.skills?.dirs).toEqual([t.path("proj/.claude/skills")]);
  });

  it("refuses a directory outside the workspace, also through a symlink, naming the file, line and key", async () => {
    const dotdot = await failure(
      load(await t.write("proj/a.toml", `${MINIMAL}[skills]\ndirs = ["../elsewhere"]\n`)),
    );
    expect(dotdot.keyPath).toBe("skills.dirs");
    expect(dotdot.issues[0]?.line).toBe(6);
    expect(dotdot.message).toContain("outside the workspace");

    await t.mkdir("outside");
    await symlink(t.path("outside"), t.path("proj/linked"));
    const linked = await failure(
      load(await t.write("proj/b.toml", `${MINIMAL}[skills]\ndirs = ["linked/skills"]\n`)),
    );
    expect(linked.message).toContain(`resolves to ${t.path("outside/skills")}`);
    // Control: the same directory inside the workspace is taken.
    await t.mkdir("proj/inside/skills");
    const inside = await load(await t.write("proj/c.toml", `${MINIMAL}[skills]\ndirs = ["inside/skills"]\n`));
    expect(inside.manifest.skills?.dirs).toEqual([t.path("proj/inside/skills")]);
  });

  it("names the key and line of an unknown key and of bad values", async () => {
    const unknown = await failure(
      load(await t.write("proj/a.toml", `${MINIMAL}[skills]\nlisting_budget_token = 10\n`)),
    );
    expect(unknown.keyPath).toBe("skills.listing_budget_token");
    expect(unknown.message).toContain('did you mean "listing_budget_tokens"?');
    expect(unknown.issues[0]?.line).toBe(6);

    const action = await failure(
      load(await t.write("proj/b.toml", `${MINIMAL}[skills]\non_over_budget = "truncate"\n`)),
    );
    expect(action.keyPath).toBe("skills.on_over_budget");
    expect(action.message).toContain('expected "error" | "search"');

    const names = await failure(
      load(await t.write("proj/c.toml", `${MINIMAL}[skills]\nenabled = ["PDF Tools"]\n`)),
    );
    expect(names.keyPath).toBe("skills.enabled");
    expect(names.message).toContain("expected true, false or a list of skill names");

    const home = await failure(
      load(await t.write("proj/d.toml", `${MINIMAL}[skills]\ndirs = ["~/skills"]\n`)),
    );
    expect(home.message).toContain('"~" is not expanded');

    const budget = await failure(
      load(await t.write("proj/e.toml", `${MINIMAL}[skills]\nlisting_budget_tokens = 0\n`)),
    );
    expect(budget.keyPath).toBe("skills.listing_budget_tokens");
  });
});
