import { existsSync } from "node:fs";
import { readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LoadToolPackagesOptions } from "../src/index.js";
import { MINIMAL, podTools, tempRoot } from "./helpers.js";

/**
 * A workspace `ws/` the scope lets the pod write (`**`: the whole tree), holding `.env` (denied by
 * `deny`), `docs/` (readable only when `readOnlyDocs`), `.podkit/manifest.toml` (the workspace
 * layer) and a sibling `outside/` no rule names.
 */
async function scopedPod(
  setup: { deny?: string; readOnlyDocs?: boolean; load?: Omit<LoadToolPackagesOptions, "warn"> } = {},
) {
  const t = await tempRoot();
  const ws = t.path("ws");
  await t.write("ws/.env", "SECRET=hunter2\n");
  await t.write("ws/docs/guide.md", "# guide\n");
  await t.write("ws/.podkit/manifest.toml", "# workspace layer\n");
  await t.write("outside/secret.txt", "outside\n");
  const rules = [
    `[[scope.allow]]\ntarget = "."\npermission = "write"\n`,
    setup.readOnlyDocs ? `[[scope.deny]]\ntarget = "docs"\npermission = "write"\n` : "",
    setup.deny === undefined ? "" : `[[scope.deny]]\ntarget = "${setup.deny}"\npermission = "read"\n`,
  ];
  const manifest = await t.write("ws/pod.toml", MINIMAL + rules.join(""));
  const tools = await podTools(manifest, ws, {
    extraOptions: { "@podkit/tools": { builtin: ["read_file", "write_file", "edit_file", "glob", "grep"] } },
    ...setup.load,
  });
  return { t, ws, tools };
}

describe("a file tool's scope refusal reports its rule in `denied`", () => {
  it("read_file .env under `deny .env` names the deny rule; positive control: without the rule it reads and reports nothing", async () => {
    const denied = await scopedPod({ deny: ".env" });
    const refused = await denied.tools.callUncapped("read_file", { path: ".env" });
    expect(refused.is_error).toBe(true);
    expect(refused.denied).toEqual({
      by: "scope",
      rule: 'deny = ".env"',
      reason: expect.stringContaining("denied by the deny rule"),
    });
    expect(JSON.stringify(refused)).not.toContain("hunter2");
    for (const [tool, args] of [
      ["write_file", { path: ".env", content: "x" }],
      ["edit_file", { path: ".env", old_string: "SECRET", new_string: "X" }],
      ["grep", { pattern: "SECRET", path: ".env" }],
    ] as const) {
      expect((await denied.tools.callUncapped(tool, args)).denied, tool).toMatchObject({
        by: "scope",
        rule: 'deny = ".env"',
      });
    }

    const open = await scopedPod();
    const read = await open.tools.callUncapped("read_file", { path: ".env" });
    expect(read.content).toContain("hunter2");
    expect(read.denied).toBeUndefined();
  });

  it("a path outside the scope, also through a planted symlink, is refused as `outside the scope`", async () => {
    const { t, ws, tools } = await scopedPod();
    await symlink(t.path("outside"), join(ws, "link"));
    for (const path of [t.path("outside/secret.txt"), "link/secret.txt", "../outside/secret.txt"]) {
      const refused = await tools.callUncapped("read_file", { path });
      expect(refused.denied, path).toMatchObject({ by: "scope", rule: "outside the scope" });
      expect(JSON.stringify(refused), path).not.toContain("outside\\n");
    }
    const written = await tools.callUncapped("write_file", { path: "link/new.txt", content: "x" });
    expect(written.denied).toMatchObject({ by: "scope", rule: "outside the scope" });
    expect(existsSync(t.path("outside/new.txt"))).toBe(false);
    expect(
      (await tools.callUncapped("glob", { pattern: "*", path: t.path("outside") })).denied,
    ).toMatchObject({
      rule: "outside the scope",
    });
  });

  it("a write the scope allows only to read names the path as not writable, or the deny rule that capped it", async () => {
    const { tools } = await scopedPod({ readOnlyDocs: true });
    const refused = await tools.callUncapped("write_file", { path: "docs/guide.md", content: "x" });
    expect(refused.denied).toMatchObject({ by: "scope", rule: 'deny = "docs" (write)' });
    // Control: the file is readable, and a write elsewhere goes through without a denial.
    expect((await tools.callUncapped("read_file", { path: "docs/guide.md" })).denied).toBeUndefined();
    expect(
      (await tools.callUncapped("write_file", { path: "notes.md", content: "x" })).denied,
    ).toBeUndefined();
  });

  it("a write to a read-only allow target reads `not writable: <path>`", async () => {
    const t = await tempRoot();
    const ws = t.path("ws");
    await t.write("ws/a.txt", "a\n");
    const manifest = await t.write(
      "ws/pod.toml",
      `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "read"\n`,
    );
    const tools = await podTools(manifest, ws, {
      extraOptions: { "@podkit/tools": { builtin: ["write_file"] } },
    });
    const refused = await tools.callUncapped("write_file", { path: "a.txt", content: "x" });
    expect(refused.denied).toEqual({
      by: "scope",
      rule: "not writable: a.txt",
      reason: `write access to "${join(ws, "a.txt")}" denied: the scope allows read only`,
    });
  });

  it("a path that cannot be resolved is refused without a rule (no containment rule decided it)", async () => {
    const { ws, tools } = await scopedPod();
    await symlink("loop", join(ws, "loop"));
    const refused = await tools.callUncapped("read_file", { path: "loop/x" });
    expect(refused.is_error).toBe(true);
    expect(refused.denied).toBeUndefined();
  });
});

describe("podkit's own files are never writable through a file tool", () => {
  it("write_file and edit_file refuse .podkit/ in a scope that allows writing everywhere; positive control: a normal file writes", async () => {
    const { ws, tools } = await scopedPod();
    const before = await readFile(join(ws, ".podkit/manifest.toml"), "utf8");
    const written = await tools.callUncapped("write_file", {
      path: ".podkit/manifest.toml",
      content: '[sandbox]\nbackend = "none"\n',
    });
    expect(written.is_error).toBe(true);
    expect(written.summary).toContain("one of podkit's own files");
    expect(written.denied).toEqual({ by: "scope", rule: "podkit's own files", reason: written.summary });
    const edited = await tools.callUncapped("edit_file", {
      path: ".podkit/manifest.toml",
      old_string: "# workspace layer",
      new_string: "[sandbox]",
    });
    expect(edited.denied).toMatchObject({ by: "scope", rule: "podkit's own files" });
    const made = await tools.callUncapped("write_file", {
      path: ".podkit/memory/new.md",
      content: "planted",
    });
    expect(made.denied).toMatchObject({ rule: "podkit's own files" });
    expect(await readFile(join(ws, ".podkit/manifest.toml"), "utf8")).toBe(before);
    expect(existsSync(join(ws, ".podkit/memory"))).toBe(false);
    // Reading them stays allowed.
    expect((await tools.callUncapped("read_file", { path: ".podkit/manifest.toml" })).content).toContain(
      "workspace layer",
    );
    // Positive control: the same scope writes an ordinary file.
    expect((await tools.callUncapped("write_file", { path: "src/a.ts", content: "x" })).summary).toBe(
      "wrote 1 bytes to src/a.ts",
    );
  });

  it("the user config dir is protected too when it lies inside the workspace", async () => {
    // The test harness puts HOME at <workspace>/.home, so the user config dir is inside the workspace.
    const { ws, tools } = await scopedPod();
    const refused = await tools.callUncapped("write_file", {
      path: ".home/.config/podkit/prompts.toml",
      content: "x",
    });
    expect(refused.denied).toMatchObject({ rule: "podkit's own files" });
    expect(existsSync(join(ws, ".home/.config/podkit/prompts.toml"))).toBe(false);
  });

  it("positive control: without the list of podkit's own paths, write_file would replace the workspace manifest", async () => {
    const { ws, tools } = await scopedPod({
      load: {
        extraOptions: { "@podkit/tools": { builtin: ["write_file"], podkit_paths: [] } },
      },
    });
    const written = await tools.callUncapped("write_file", {
      path: ".podkit/manifest.toml",
      content: "pwned\n",
    });
    expect(written.denied).toBeUndefined();
    expect(await readFile(join(ws, ".podkit/manifest.toml"), "utf8")).toBe("pwned\n");
  });
});
