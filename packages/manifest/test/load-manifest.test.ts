import { readdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT } from "../src/defaults.js";
import {
  findWorkspace,
  loadManifest,
  userConfigDir,
  userStateDir,
  WorkspaceNotFoundError,
  workspaceDataDir,
} from "../src/index.js";
import { makeTempRoot, type TempRoot } from "./temp-root.js";

const MINIMAL = `[pod]\nname = "reviewer"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`;

let t: TempRoot;
beforeEach(async () => {
  t = await makeTempRoot();
});
afterEach(async () => {
  await t.cleanup();
});

/** Writes the user manifest (under the fake home) and a workspace manifest under `proj/`. */
async function layers(user: string | undefined, workspace: string | undefined) {
  if (user !== undefined) await t.write("home/.config/podkit/manifest.toml", user);
  await t.mkdir("proj/.podkit");
  if (workspace !== undefined) await t.write("proj/.podkit/manifest.toml", workspace);
}

describe("user config dir and workspace discovery", () => {
  it("uses $XDG_CONFIG_HOME/podkit when set, else <home>/.config/podkit", () => {
    expect(userConfigDir(t.env())).toBe(join(t.home, ".config", "podkit"));
    expect(userConfigDir(t.env(".", { XDG_CONFIG_HOME: t.path("xdg") }))).toBe(t.path("xdg/podkit"));
    expect(userConfigDir(t.env(".", { XDG_CONFIG_HOME: "relative/xdg" }))).toBe(
      join(t.home, ".config", "podkit"),
    );
  });

  it("finds the nearest ancestor holding .podkit/, else the cwd", async () => {
    await t.mkdir("proj/.podkit");
    await t.mkdir("proj/src/deep");
    await t.mkdir("loose/dir");
    expect(findWorkspace(t.env("proj/src/deep"))).toBe(t.path("proj"));
    expect(findWorkspace(t.env("proj"))).toBe(t.path("proj"));
    expect(findWorkspace(t.env("loose/dir"))).toBe(t.path("loose/dir"));
  });

  it("takes an explicit workspace as given, relative to the cwd, and refuses one that is not a directory", async () => {
    await t.mkdir("proj/.podkit");
    await t.mkdir("other/src");
    expect(findWorkspace({ ...t.env("proj"), workspace: "../other" })).toBe(t.path("other"));
    expect(() => findWorkspace({ ...t.env("proj"), workspace: "../missing" })).toThrow(
      WorkspaceNotFoundError,
    );
    await t.write("proj/pod.toml", `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "read"\n`);
    // A relative path of the explicit file still resolves against the cwd (proj/); the workspace
    // is what was given, and the workspace layer is read from it (none there here).
    const loaded = await loadManifest({
      file: "pod.toml",
      env: t.env("proj"),
      workspace: t.path("other/src"),
    });
    expect(loaded.workspace).toBe(t.path("other/src"));
    expect(loaded.file).toBe(t.path("proj/pod.toml"));
    expect(loaded.layers.find((l) => l.kind === "workspace")?.file).toBe(
      t.path("other/src/.podkit/manifest.toml"),
    );
  });

  it("keeps the data of a workspace without .podkit/ under the user state dir, and creates nothing", async () => {
    await t.mkdir("proj/.podkit");
    await t.mkdir("loose");
    await t.write("loose/pod.toml", MINIMAL);
    expect(userStateDir(t.env())).toBe(join(t.home, ".local", "state", "podkit"));
    expect(userStateDir(t.env(".", { XDG_STATE_HOME: t.path("state") }))).toBe(t.path("state/podkit"));
    await t.write("proj/.podkit/manifest.toml", MINIMAL);
    const inProj = await loadManifest({ env: t.env("proj") });
    expect(inProj.dataDir).toBe(t.path("proj/.podkit"));
    const loose = await loadManifest({ file: "pod.toml", env: t.env("loose") });
    expect(loose.workspace).toBe(t.path("loose"));
    expect(loose.dataDir.startsWith(join(t.home, ".local", "state", "podkit", "workspaces", "loose-"))).toBe(
      true,
    );
    // One directory per workspace path: another directory of the same name gets another one.
    await t.mkdir("elsewhere/loose");
    expect(workspaceDataDir(t.path("elsewhere/loose"), t.env())).not.toBe(loose.dataDir);
    expect(await readdir(t.path("loose"))).toEqual(["pod.toml"]);
  });

  it("reads the user layer from $XDG_CONFIG_HOME when it is set", async () => {
    await t.write("xdg/podkit/manifest.toml", MINIMAL);
    await t.write("home/.config/podkit/manifest.toml", `[pod]\nname = "from-home"\n`);
    const loaded = await loadManifest({ env: t.env(".", { XDG_CONFIG_HOME: t.path("xdg") }) });
    expect(loaded.manifest.pod.name).toBe("reviewer");
    expect(loaded.layers.find((l) => l.kind === "user")?.file).toBe(t.path("xdg/podkit/manifest.toml"));
  });
});

describe("cascade merge rules", () => {
  it("lets the upper layer win for scalars: builtin < user < workspace < file < --set", async () => {
    await layers(
      `${MINIMAL}[worker]\nmax_turns = 5\nmax_tokens = 1000\nlanguage = "English"\n`,
      "[worker]\nmax_turns = 10\nmax_tokens = 2000\n",
    );
    const file = await t.write("proj/pod.toml", "[worker]\nmax_turns = 20\n");
    const env = t.env("proj");

    const loaded = await loadManifest({ file, env, overlays: ["worker.max_turns=30"] });
    expect(loaded.manifest.worker.max_turns).toBe(30);
    expect(loaded.manifest.worker.max_tokens).toBe(2000);
    expect(loaded.manifest.worker.language).toBe("English");
    expect(loaded.manifest.worker.system_prompt).toBe(DEFAULT_SYSTEM_PROMPT);
    expect(loaded.provenance.get("worker.max_turns")?.layer).toMatchObject({
      kind: "set",
      overlay: "worker.max_turns=30",
    });
    expect(loaded.provenance.get("worker.max_tokens")?.layer.kind).toBe("workspace");
    expect(loaded.provenance.get("worker.language")).toMatchObject({ layer: { kind: "user" }, line: 8 });
    expect(loaded.provenance.get("worker.system_prompt")?.layer.kind).toBe("builtin");

    const withoutSet = await loadManifest({ file, env });
    expect(withoutSet.manifest.worker.max_turns).toBe(20);
    expect(withoutSet.provenance.get("worker.max_turns")).toMatchObject({
      layer: { kind: "file", file },
      line: 2,
    });
  });

  it("merges tables field by field, including nested tables and maps", async () => {
    await layers(
      `${MINIMAL}[worker]\ntemperature = 0.2\n[worker.tool_output]\ndefault_max_bytes = 1000\nper_tool = { grep = 10, glob = 20 }\n`,
      undefined,
    );
    const file = await t.write(
      "proj/pod.toml",
      `[worker]\ntop_p = 0.9\n[worker.tool_output]\nper_tool = { grep = 99, read_file = 30 }\n`,
    );
    const { manifest, provenance } = await loadManifest({ file, env: t.env("proj") });
    expect(manifest.worker.temperature).toBe(0.2);
    expect(manifest.worker.top_p).toBe(0.9);
    expect(manifest.worker.tool_output).toEqual({
      default_max_bytes: 1000,
      per_tool: { grep: 99, glob: 20, read_file: 30 },
    });
    expect(manifest.model.ref).toBe("anthropic/claude-sonnet-4-5");
    expect(provenance.get("worker.tool_output.per_tool.glob")?.layer.kind).toBe("user");
    expect(provenance.get("worker.tool_output.per_tool.grep")?.layer.kind).toBe("file");
  });

  it("replaces plain lists such as stop_sequences instead of accumulating them", async () => {
    await layers(`${MINIMAL}[worker]\nstop_sequences = ["A", "B"]\n`, `[worker]\nstop_sequences = ["C"]\n`);
    const { manifest } = await loadManifest({ env: t.env("proj") });
    expect(manifest.worker.stop_sequences).toEqual(["C"]);
  });

  it("accumulates scope.allow, scope.deny and mcp.server across every layer in order", async () => {
    await layers(
      `${MINIMAL}[[scope.allow]]\ntarget = "notes"\npermission = "read"\n[[mcp.server]]\nname = "github"\ncommand = "npx"\n`,
      `[[scope.allow]]\ntarget = ".."\npermission = "write"\n[[scope.deny]]\ntarget = "../secrets"\npermission = "read"\n`,
    );
    const file = await t.write(
      "proj/pods/pod.toml",
      `[[scope.allow]]\ntarget = "."\npermission = "read"\nrecursive = false\n[[scope.deny]]\ntarget = "cache"\npermission = "write"\n[[mcp.server]]\nname = "fs"\ncommand = "./bin/fs-server"\nargs = ["--ro"]\n`,
    );
    const { manifest, provenance } = await loadManifest({
      file,
      env: t.env("proj"),
      overlays: ['scope.allow=[{ target = "out", permission = "write" }]'],
    });
    expect(manifest.scope.allow).toEqual([
      { target: t.path("home/.config/podkit/notes"), permission: "read", recursive: true },
      { target: t.path("proj"), permission: "write", recursive: true },
      { target: t.path("proj/pods"), permission: "read", recursive: false },
      { target: t.path("proj/out"), permission: "write", recursive: true },
    ]);
    expect(manifest.scope.deny).toEqual([
      { target: t.path("proj/secrets"), permission: "read", recursive: true },
      { target: t.path("proj/pods/cache"), permission: "write", recursive: true },
    ]);
    expect(manifest.mcp.server).toEqual([
      { name: "github", command: "npx", args: [], env: {}, headers_env: {} },
      { name: "fs", command: t.path("proj/pods/bin/fs-server"), args: ["--ro"], env: {}, headers_env: {} },
    ]);
    expect(provenance.get("scope.allow[2]")).toMatchObject({
      layer: { kind: "file" },
      keyPath: "scope.allow[0]",
      line: 1,
    });
    expect(provenance.get("scope.deny[1].target")).toMatchObject({
      keyPath: "scope.deny[0].target",
      line: 6,
    });
    expect(provenance.get("scope.allow[3]")?.layer.kind).toBe("set");
  });

  it("resolves each layer's relative paths against its own file's directory", async () => {
    await t.write("home/.config/podkit/packs/ja.toml", "[prompt]\n");
    await layers(
      `[pod]\nname = "reviewer"\nprompt_pack = "packs/ja.toml"\n[model]\nref = "openai/gpt-4o"\n`,
      `[[scope.allow]]\ntarget = "."\npermission = "read"\n`,
    );
    const file = await t.write(
      "elsewhere/conf/pod.toml",
      `[[scope.allow]]\ntarget = "data"\npermission = "write"\n`,
    );
    const { manifest } = await loadManifest({ file, env: t.env("proj") });
    expect(manifest.pod.prompt_pack).toBe(t.path("home/.config/podkit/packs/ja.toml"));
    expect(manifest.scope.allow.map((r) => r.target)).toEqual([
      t.path("proj/.podkit"),
      t.path("elsewhere/conf/data"),
    ]);
  });

  it("keeps $prefix prompt packs as references and resolves --set paths against the cwd", async () => {
    await layers(MINIMAL, undefined);
    await t.mkdir("proj/sub");
    const { manifest } = await loadManifest({
      env: t.env("proj/sub"),
      overlays: ["pod.prompt_pack=$workspace/packs/ja.toml", 'scope.allow=[{target="x", permission="read"}]'],
    });
    expect(manifest.pod.prompt_pack).toBe("$workspace/packs/ja.toml");
    expect(manifest.scope.allow[0]?.target).toBe(t.path("proj/sub/x"));
  });

  it("canonicalizes targets through symlinked manifest directories", async () => {
    await t.mkdir("real/cfg");
    await symlink(t.path("real/cfg"), t.path("cfg-link"));
    const file = await t.write(
      "real/cfg/pod.toml",
      `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "read"\n`,
    );
    const { manifest } = await loadManifest({ file: t.path("cfg-link/pod.toml"), env: t.env() });
    expect(file).toBe(t.path("real/cfg/pod.toml"));
    expect(manifest.scope.allow[0]?.target).toBe(t.path("real/cfg"));
  });
});

describe("--set overlays", () => {
  it("parses values as TOML and falls back to a string", async () => {
    await layers(MINIMAL, undefined);
    const { manifest } = await loadManifest({
      env: t.env("proj"),
      overlays: [
        "pod.name=code reviewer",
        "worker.max_turns=7",
        "worker.temperature=0.5",
        'worker.stop_sequences=["END", "STOP"]',
        'worker.language="true"',
        "worker.reasoning=high",
        "worker.system_prompt=Today is {{ date }}.",
      ],
    });
    expect(manifest.pod.name).toBe("code reviewer");
    expect(manifest.worker).toMatchObject({
      max_turns: 7,
      temperature: 0.5,
      stop_sequences: ["END", "STOP"],
      language: "true",
      reasoning: "high",
      system_prompt: "Today is {{ date }}.",
    });
  });

  it("applies overlays in order, the later one winning", async () => {
    await layers(MINIMAL, undefined);
    const { manifest, provenance } = await loadManifest({
      env: t.env("proj"),
      overlays: ["worker.max_turns=3", "worker.max_turns=4"],
    });
    expect(manifest.worker.max_turns).toBe(4);
    expect(provenance.get("worker.max_turns")?.layer.overlay).toBe("worker.max_turns=4");
  });

  it("treats a value that smuggles a second TOML key as a plain string", async () => {
    await layers(MINIMAL, undefined);
    const { manifest } = await loadManifest({ env: t.env("proj"), overlays: ["pod.name=x\nevil = 1"] });
    expect(manifest.pod.name).toBe("x\nevil = 1");
  });
});

describe("defaults after the cascade", () => {
  it("fills builtin worker defaults and per-provider model defaults", async () => {
    const file = await t.write("m.toml", `[pod]\nname = "p"\n[model]\nref = "google/gemini-2.5-pro"\n`);
    const { manifest, provenance, layers: seen } = await loadManifest({ file, env: t.env() });
    expect(manifest.worker).toEqual({
      system_prompt: DEFAULT_SYSTEM_PROMPT,
      language: "match the user's language",
      max_tokens: 8192,
      max_turns: 50,
      tool_output: { default_max_bytes: 65536, per_tool: {} },
    });
    expect(manifest.model).toEqual({
      ref: "google/gemini-2.5-pro",
      api_key_env: "GOOGLE_GENERATIVE_AI_API_KEY",
      context_window: 1_048_576,
    });
    expect(provenance.get("model.context_window")?.layer.kind).toBe("builtin");
    expect(manifest.compaction).toBeUndefined();
    expect(manifest.memory).toBeUndefined();
    expect(seen.map((l) => [l.kind, l.present])).toEqual([
      ["builtin", true],
      ["user", false],
      ["workspace", false],
      ["file", true],
    ]);
  });

  it("enables compaction with its defaults when [compaction] is present, thresholds from the window", async () => {
    const file = await t.write(
      "m.toml",
      `[pod]\nname = "p"\n[model]\nref = "ollama/qwen3"\ncontext_window = 100000\n[compaction]\nretained_tokens = 6000\n`,
    );
    const { manifest, provenance } = await loadManifest({ file, env: t.env() });
    expect(manifest.compaction).toEqual({
      threshold: 60000,
      request_threshold: 75000,
      retained_tokens: 6000,
      prune_protected_tokens: 8000,
      prune_min_savings: 4096,
      auto_read_budget_tokens: 8000,
      worker_context_max_tokens: 50000,
      summary_target_tokens: 2000,
      summary_max_tokens: 4000,
      result_context_max_tokens: 60000,
      worker_max_turns: 20,
    });
    expect(provenance.get("compaction.retained_tokens")?.layer.kind).toBe("file");
    expect(provenance.get("compaction.threshold")?.layer.kind).toBe("builtin");
  });

  it("lets an upper layer switch off a table a lower layer enabled", async () => {
    await layers(`${MINIMAL}[compaction]\n[memory]\n`, "[compaction]\nenabled = false\n");
    const { manifest } = await loadManifest({ env: t.env("proj") });
    expect(manifest.compaction).toBeUndefined();
    expect(manifest.memory).toEqual({
      extract_threshold: 20000,
      consolidation_threshold_files: 8,
      consolidation_threshold_bytes: 65536,
      tools: false,
      git_commit: false,
    });
  });

  it("denies generic writes to the memory trees when [memory] is on", async () => {
    await layers(
      `${MINIMAL}[memory]\ntools = true\n[[scope.allow]]\ntarget = "/"\npermission = "write"\n`,
      undefined,
    );
    const { scope, manifest } = await loadManifest({ env: t.env("proj") });
    expect(manifest.memory?.tools).toBe(true);
    expect(await scope.permissionAt(t.path("proj/.podkit/memory/decisions/x.md"))).toBe("read");
    expect(await scope.permissionAt(t.path("proj/.podkit/knowledge/y.md"))).toBe("read");
    expect(await scope.permissionAt(t.path("proj/src/z.ts"))).toBe("write");
  });

  it("takes pod.name from any layer, so a user-level name satisfies the requirement", async () => {
    await layers(MINIMAL, "[worker]\nmax_turns = 2\n");
    const { manifest } = await loadManifest({ env: t.env("proj") });
    expect(manifest.pod.name).toBe("reviewer");
  });

  it("does not apply the workspace manifest twice when it is also the explicit file", async () => {
    await layers(undefined, `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "read"\n`);
    const loaded = await loadManifest({ file: ".podkit/manifest.toml", env: t.env("proj") });
    expect(loaded.manifest.scope.allow).toHaveLength(1);
    expect(loaded.layers.find((l) => l.kind === "workspace")).toMatchObject({ present: false });
    expect(loaded.file).toBe(t.path("proj/.podkit/manifest.toml"));
  });
});
