import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { caught, collectWarnings, FIXED_CLOCK, useTempDirs, writeFiles } from "../../test/helpers.js";
import { builtinPromptsDir } from "../builtin-resources.js";
import { PodUsageError } from "../errors.js";
import { PromptLoader } from "../prompt-ref/prompt-loader.js";
import { buildSystemPromptContext } from "../system-prompt/system-prompt-context.js";
import { SystemPromptTemplate } from "../system-prompt/system-prompt-template.js";
import { BUILTIN_PROMPT_KEYS } from "./builtin-keys.generated.js";
import { PromptCatalogError, PromptRenderError, UnknownPromptKeyError } from "./errors.js";
import { POD_PROMPTS } from "./pod-prompt.js";
import { PromptCatalog, type PromptCatalogOptions } from "./prompt-catalog.js";

const tempDir = useTempDirs();

interface Layers {
  user?: string;
  workspace?: string;
  manifest?: { path: string; content: string };
  files?: Record<string, string>;
}

/** Temp user config dir and workspace holding the given pack texts. */
async function setup(layers: Layers = {}) {
  const config = await tempDir("config");
  const workspace = await tempDir("ws");
  if (layers.user !== undefined) await writeFiles(config, { "prompts.toml": layers.user });
  if (layers.workspace !== undefined)
    await writeFiles(workspace, { ".podkit/prompts.toml": layers.workspace });
  if (layers.manifest) await writeFiles(workspace, { [layers.manifest.path]: layers.manifest.content });
  if (layers.files) await writeFiles(workspace, layers.files);
  const { warnings, sink } = collectWarnings();
  const options: PromptCatalogOptions = { userConfigDir: config, workspace, onWarning: sink };
  return { config, workspace, warnings, options };
}

const pack = (entries: Record<string, string>) =>
  `[prompt]\n${Object.entries(entries)
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join("\n")}\n`;

describe("prompt catalog (acceptance 31–43)", () => {
  it("[31] the builtin pack covers every PodPrompt key and nothing else", async () => {
    const toml = parse(await readFile(join(builtinPromptsDir(), "internal.toml"), "utf8")) as {
      prompt: object;
    };
    expect(Object.keys(toml).sort()).toEqual(["prompt"]);
    expect(Object.keys(toml.prompt).sort()).toEqual([...POD_PROMPTS].sort());
    expect([...BUILTIN_PROMPT_KEYS]).toEqual([...POD_PROMPTS].sort()); // the list the build generated
    const catalog = await PromptCatalog.loadBuiltinOnly();
    expect(catalog.entries().map((e) => [e.key, e.layer])).toEqual(POD_PROMPTS.map((k) => [k, "builtin"]));
  });

  it("[32] compact_system renders and mentions write_summary and mark_read_required", async () => {
    const catalog = await PromptCatalog.loadBuiltinOnly();
    const text = catalog.render("compact_system", {
      summary_target_tokens: 2000,
      summary_max_tokens: 4000,
      auto_read_budget_tokens: 8000,
      items: 40,
      summarised: 30,
      retained: 10,
      kept_from: "#30 [User] go on",
    });
    for (const tool of [
      "write_summary",
      "mark_read_required",
      "read_file",
      "read_session_items",
      "search_session_log",
      "add_reference",
    ]) {
      expect(text).toContain(tool);
    }
    expect(text).toContain("4000 tokens");
    expect(text).toContain("8000 tokens");
    expect(text).toContain("Items #0 to #29 are summarised");
    expect(text).toContain("#30 [User] go on");
    expect(text).not.toContain("{{");
  });

  it("[33] notify_wrapper interpolates message", async () => {
    const catalog = await PromptCatalog.loadBuiltinOnly();
    const text = catalog.render("notify_wrapper", { message: "CI finished: 3 failures" });
    expect(text).toMatch(/^\[Notification\]\nCI finished: 3 failures\n\n/);
  });

  it("[34] working_boundaries_section wraps scope_summary; agents_md_section wraps agents_md", async () => {
    const catalog = await PromptCatalog.loadBuiltinOnly();
    const boundaries = catalog.render("working_boundaries_section", { scope_summary: "Readable:\n  - /r" });
    expect(boundaries).toMatch(/^## Working boundaries\n[\s\S]*\n\nReadable:\n {2}- \/r$/);
    const agents = catalog.render("agents_md_section", { agents_md: "# Rules\nuse pnpm" });
    expect(agents).toMatch(/^## Project instructions \(AGENTS\.md\)\n[\s\S]*\n\n# Rules\nuse pnpm$/);
  });

  it("[35] a user pack overrides one key; all other keys still come from builtin", async () => {
    const { options, config } = await setup({ user: pack({ interrupt_system_note: "[USER NOTE]" }) });
    const catalog = await PromptCatalog.load(options);
    expect(catalog.render("interrupt_system_note", { trigger: "user" })).toBe("[USER NOTE]");
    expect(catalog.explain("interrupt_system_note")).toMatchObject({
      layer: "user",
      file: join(config, "prompts.toml"),
    });
    for (const entry of catalog.entries().filter((e) => e.key !== "interrupt_system_note")) {
      expect(entry.layer).toBe("builtin");
    }
  });

  it("[36] workspace beats user; manifest pack beats workspace", async () => {
    const { options, workspace } = await setup({
      user: pack({ notify_wrapper: "user {{ message }}", interrupt_system_note: "user note" }),
      workspace: pack({ notify_wrapper: "workspace {{ message }}", interrupt_system_note: "workspace note" }),
      manifest: { path: "packs/role.toml", content: pack({ interrupt_system_note: "manifest note" }) },
    });
    const catalog = await PromptCatalog.load({
      ...options,
      promptPack: "packs/role.toml",
      manifestDir: workspace,
    });
    expect(catalog.render("notify_wrapper", { message: "m" })).toBe("workspace m");
    expect(catalog.render("interrupt_system_note", { trigger: "user" })).toBe("manifest note");
    expect(catalog.explain("interrupt_system_note").layer).toBe("manifest");
    expect(catalog.explain("notify_wrapper").layer).toBe("workspace");
  });

  it("[37] an unknown key in a runtime pack produces one warning naming layer, file and key, and is otherwise ignored", async () => {
    const { options, workspace, warnings } = await setup({
      workspace: pack({ notfy_wrapper: "typo {{ message }}", interrupt_system_note: "ws" }),
    });
    const catalog = await PromptCatalog.load(options);
    expect(warnings).toEqual([
      expect.objectContaining({
        code: "prompt_pack.unknown_key",
        layer: "workspace",
        file: join(workspace, ".podkit", "prompts.toml"),
        key: "notfy_wrapper",
      }),
    ]);
    expect(warnings[0]?.message).toMatch(
      /workspace prompt pack .*prompts\.toml: unknown prompt key 'notfy_wrapper'/,
    );
    expect(catalog.render("interrupt_system_note", { trigger: "user" })).toBe("ws");
    expect(catalog.explain("notify_wrapper").layer).toBe("builtin");
  });

  describe("[38] manifest prompt_pack", () => {
    it("a relative path resolves against the manifest's directory", async () => {
      const { options, workspace } = await setup({
        manifest: { path: "agents/reviewer/packs/ja.toml", content: pack({ interrupt_system_note: "ja" }) },
      });
      const catalog = await PromptCatalog.load({
        ...options,
        promptPack: "packs/ja.toml",
        manifestDir: join(workspace, "agents", "reviewer"),
      });
      expect(catalog.render("interrupt_system_note", { trigger: "user" })).toBe("ja");
      expect(catalog.explain("interrupt_system_note").file).toBe(
        join(workspace, "agents/reviewer/packs/ja.toml"),
      );
    });

    it("`$user/packs/x.toml` resolves through the prefix", async () => {
      const { options, config } = await setup();
      await writeFiles(config, {
        "prompts/packs/x.toml": pack({ interrupt_system_note: "from $user pack" }),
      });
      const catalog = await PromptCatalog.load({ ...options, promptPack: "$user/packs/x.toml" });
      expect(catalog.render("interrupt_system_note", { trigger: "user" })).toBe("from $user pack");
      expect(catalog.explain("interrupt_system_note")).toMatchObject({
        layer: "manifest",
        file: join(config, "prompts/packs/x.toml"),
      });
    });

    it("a missing manifest pack is an error", async () => {
      const { options, workspace } = await setup();
      for (const promptPack of ["packs/none.toml", "$user/packs/none.toml"]) {
        const error = await caught(PromptCatalog.load({ ...options, promptPack, manifestDir: workspace }));
        expect(PromptCatalogError.isInstance(error)).toBe(true);
        expect((error as PromptCatalogError).layer).toBe("manifest");
        expect(error.message).toContain("[pod].prompt_pack");
      }
    });
  });

  it('[39] a runtime value can pull long text with {% include "$podkit/internal/compact_system" %} and prepend its own line', async () => {
    const { options } = await setup({
      workspace: pack({
        compact_system: 'Project rule: summarise in German.\n{% include "$podkit/internal/compact_system" %}',
      }),
    });
    const catalog = await PromptCatalog.load(options);
    const text = catalog.render("compact_system", {
      summary_target_tokens: 1,
      summary_max_tokens: 2,
      auto_read_budget_tokens: 3,
      items: 4,
      summarised: 3,
      retained: 1,
      kept_from: "#3 [User] go on",
    });
    expect(text.split("\n")[0]).toBe("Project rule: summarise in German.");
    expect(text).toContain("write_summary");
  });

  describe("[40] a syntax error in any layer's value fails catalog loading, naming layer, file and key", () => {
    for (const layer of ["user", "workspace", "manifest"] as const) {
      it(`${layer} layer`, async () => {
        const broken = pack({ interrupt_system_note: "ok", notify_wrapper: "{{ message " });
        const { options, workspace, config } = await setup({
          [layer]: layer === "manifest" ? { path: "pack.toml", content: broken } : broken,
        });
        const error = await caught(
          PromptCatalog.load({
            ...options,
            promptPack: layer === "manifest" ? "pack.toml" : undefined,
            manifestDir: workspace,
          }),
        );
        expect(PromptCatalogError.isInstance(error)).toBe(true);
        const e = error as PromptCatalogError;
        const file = {
          user: join(config, "prompts.toml"),
          workspace: join(workspace, ".podkit/prompts.toml"),
          manifest: join(workspace, "pack.toml"),
        }[layer];
        expect([e.layer, e.file, e.key, e.line]).toEqual([layer, file, "notify_wrapper", 3]);
        expect(e.message).toContain(`${layer} prompt pack ${file}:3, key [prompt].notify_wrapper`);
      });
    }

    it("even when a higher layer overrides the broken value", async () => {
      const { options } = await setup({
        user: pack({ notify_wrapper: "{% if %}" }),
        workspace: pack({ notify_wrapper: "fine {{ message }}" }),
      });
      const error = await caught(PromptCatalog.load(options));
      expect((error as PromptCatalogError).layer).toBe("user");
    });

    it("and an include that cannot be resolved fails loading too", async () => {
      const { options } = await setup({
        workspace: pack({ notify_wrapper: '{% include "$workspace/nope" %}' }),
      });
      const error = await caught(PromptCatalog.load(options));
      expect((error as PromptCatalogError).key).toBe("notify_wrapper");
      expect(error.message).toContain("$workspace/nope.md");
    });
  });

  describe("[41] bad TOML or a non-string value is an error naming the file (and line for TOML)", () => {
    it("bad TOML", async () => {
      const { options, workspace } = await setup({
        workspace: '[prompt]\nnotify_wrapper = "ok"\nbroken = \n',
      });
      const error = await caught(PromptCatalog.load(options));
      const e = error as PromptCatalogError;
      expect([e.layer, e.file, e.line]).toEqual(["workspace", join(workspace, ".podkit/prompts.toml"), 3]);
      expect(e.message).toMatch(/prompts\.toml:3:\d+: invalid TOML/);
    });

    it("a non-string value", async () => {
      const { options, config } = await setup({ user: "[prompt]\nnotify_wrapper = 42\n" });
      const error = await caught(PromptCatalog.load(options));
      const e = error as PromptCatalogError;
      expect([e.layer, e.file, e.key, e.line]).toEqual([
        "user",
        join(config, "prompts.toml"),
        "notify_wrapper",
        2,
      ]);
      expect(e.message).toContain("must be a string");
    });

    it("[prompt] that is not a table", async () => {
      const { options } = await setup({ user: 'prompt = "x"\n' });
      expect((await caught(PromptCatalog.load(options))).message).toContain("[prompt] must be a table");
    });
  });

  it("[42] explain(key) reports the winning layer and file", async () => {
    const { options, workspace } = await setup({
      workspace: pack({ resident_memory_section: "M: {{ summary }}" }),
    });
    const catalog = await PromptCatalog.load(options);
    expect(catalog.explain("resident_memory_section")).toEqual({
      key: "resident_memory_section",
      layer: "workspace",
      file: join(workspace, ".podkit/prompts.toml"),
      source: "M: {{ summary }}",
    });
    expect(catalog.explain("notify_wrapper")).toMatchObject({
      layer: "builtin",
      file: join(builtinPromptsDir(), "internal.toml"),
    });
  });

  it('[43] setting working_boundaries_section = "" in a pack removes that trailing section', async () => {
    const { options } = await setup({ workspace: pack({ working_boundaries_section: "" }) });
    const catalog = await PromptCatalog.load(options);
    const context = buildSystemPromptContext({
      clock: FIXED_CLOCK,
      cwd: "/w",
      scope: { readable: ["/w"], writable: [], summary: "Readable:\n  - /w" },
      tools: [],
      agentsMd: "agents",
      language: "en",
    });
    const text = await SystemPromptTemplate.parse("Body.", PromptLoader.create({})).render(context, catalog);
    expect(text).not.toContain("Working boundaries");
    expect(text).toMatch(/^Body\.\n\n## Project instructions \(AGENTS\.md\)\n/);
  });
});

describe("PromptCatalog.render", () => {
  it("reports a render failure as PromptRenderError naming key, layer and file", async () => {
    const { options, workspace } = await setup({ workspace: pack({ notify_wrapper: "{{ messages }}" }) });
    const catalog = await PromptCatalog.load(options);
    const error = await caught(() => catalog.render("notify_wrapper", { message: "x" }));
    expect(PromptRenderError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      key: "notify_wrapper",
      layer: "workspace",
      file: join(workspace, ".podkit/prompts.toml"),
    });
    expect(error.message).toContain("'messages' is undefined");
  });

  it("refuses a key that is not a PodPrompt at runtime with a typed error, for render and explain", async () => {
    const catalog = await PromptCatalog.loadBuiltinOnly();
    for (const call of [
      () => (catalog.render as (k: string) => string)("nope"),
      () => (catalog.explain as (k: string) => unknown)("nope"),
    ]) {
      const error = await caught(call);
      expect(UnknownPromptKeyError.isInstance(error)).toBe(true);
      expect(error).not.toBeInstanceOf(TypeError);
      expect((error as UnknownPromptKeyError).message).toBe('unknown prompt key "nope"');
      expect((error as UnknownPromptKeyError).hint).toContain("notify_wrapper");
    }
  });

  it("will not load a layered catalog without being told which layers: builtin-only is explicit", async () => {
    // `load({})` once returned a builtin-only catalog silently — the bug docs/prompts.md warns about.
    const error = await caught((PromptCatalog.load as (o: object) => Promise<PromptCatalog>)({}));
    expect(PodUsageError.isInstance(error)).toBe(true);
    expect(error.message).toContain("loadPodResources");
    const builtin = await PromptCatalog.loadBuiltinOnly();
    expect(builtin.entries().every((e) => e.layer === "builtin")).toBe(true);
    expect(builtin.loader.roots).toEqual({ podkit: builtin.loader.roots.podkit });
  });

  it("renders context_update_section with its sections in order", async () => {
    const catalog = await PromptCatalog.loadBuiltinOnly();
    const text = catalog.render("context_update_section", {
      sections: [
        { id: "memory", text: "remember X" },
        { id: "tasks", text: "task Y" },
      ],
    });
    expect(text).toMatch(
      /<context id="memory">\nremember X\n<\/context>\n<context id="tasks">\ntask Y\n<\/context>$/,
    );
  });

  it("memory prompts carry seed 004's rules and the language", async () => {
    const catalog = await PromptCatalog.loadBuiltinOnly();
    const extract = catalog.render("memory_extract_system", { language: "Japanese" });
    for (const phrase of [
      "write_extracted",
      "decisions",
      "discussions",
      "attempts",
      "requests",
      "empty",
      "Japanese",
      "authoritative",
    ]) {
      expect(extract).toContain(phrase);
    }
    const consolidation = catalog.render("memory_consolidation_system", { language: "Japanese" });
    for (const phrase of [
      "knowledge_query",
      "memory_write",
      "replaced_by",
      "candidate report",
      "model_invocation",
      "Japanese",
      "tidy",
    ]) {
      expect(consolidation).toContain(phrase);
    }
  });
});
