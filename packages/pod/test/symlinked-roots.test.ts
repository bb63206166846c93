import { readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PromptCatalogError } from "../src/catalog/errors.js";
import { PromptCatalog } from "../src/catalog/prompt-catalog.js";
import { PromptRootEscapeError } from "../src/prompt-ref/errors.js";
import { PromptLoader } from "../src/prompt-ref/prompt-loader.js";
import { caught, collectWarnings, useTempDirs, writeFiles } from "./helpers.js";

// Issue 10: a prefix root must resolve inside the directory that owns it. A cloned repository
// can ship `.podkit` or `.podkit/prompts` as a symbolic link to anywhere on the machine.
const tempDir = useTempDirs();

const SECRET = "SECRET-OUTSIDE-THE-WORKSPACE";

/** A workspace and, beside it, an outside directory holding prompt files and a pack. */
async function layout() {
  const base = await tempDir("roots");
  const workspace = join(base, "ws");
  const outside = join(base, "outside");
  await writeFiles(base, {
    "ws/README.md": "a cloned repository",
    "outside/prompts/secret.md": SECRET,
    "outside/prompts/macros.md": `{% macro leak() %}${SECRET}{% endmacro %}`,
    "outside/prompts.toml": `[prompt]\nnotify_wrapper = "${SECRET}"\n`,
    "outside/secret.md": SECRET,
    "outside/macros.md": `{% macro leak() %}${SECRET}{% endmacro %}`,
  });
  return { base, workspace, outside };
}

async function render(loader: PromptLoader, source: string): Promise<string> {
  const linked = await loader.link(loader.environment.compile("inline", source));
  return loader.environment.render(linked, {}).text;
}

const REFS = {
  include: '{% include "$workspace/secret" %}',
  import: '{% import "$workspace/macros" as m %}{{ m.leak() }}',
  "from-import": '{% from "$workspace/macros" import leak %}{{ leak() }}',
};

describe("a `.podkit` that is a symbolic link out of the workspace", () => {
  it("really leads to the outside files (positive control)", async () => {
    const { workspace, outside } = await layout();
    await symlink(outside, join(workspace, ".podkit"));
    expect(await readFile(join(workspace, ".podkit/prompts/secret.md"), "utf8")).toBe(SECRET);
    expect(await readFile(join(workspace, ".podkit/prompts.toml"), "utf8")).toContain(SECRET);
  });

  it.each(Object.entries(REFS))("refuses %s, naming the root and where it points", async (_, source) => {
    const { workspace, outside } = await layout();
    await symlink(outside, join(workspace, ".podkit"));
    const error = await caught(render(PromptLoader.create({ workspace }), source));
    expect(PromptRootEscapeError.isInstance(error), String(error)).toBe(true);
    expect(error.message).toContain(`$workspace prompt root is refused`);
    expect(error.message).toContain(`${join(workspace, ".podkit")} resolves to ${outside}`);
    expect(error.message).not.toContain(SECRET);
  });

  it("refuses the workspace pack file, naming the link and where it points", async () => {
    const { workspace, outside } = await layout();
    await symlink(outside, join(workspace, ".podkit"));
    const { sink } = collectWarnings();
    const error = await caught(PromptCatalog.load({ userConfigDir: null, workspace, onWarning: sink }));
    expect(PromptCatalogError.isInstance(error), String(error)).toBe(true);
    expect(error.message).toContain("workspace prompt pack");
    expect(error.message).toContain(`${join(workspace, ".podkit")} resolves to ${outside}`);
  });
});

describe("a `.podkit/prompts` that is a symbolic link out of the workspace", () => {
  async function linked() {
    const { workspace, outside, base } = await layout();
    await writeFiles(workspace, {
      ".podkit/prompts.toml": '[prompt]\nnotify_wrapper = "[N] {{ message }}"\n',
    });
    await symlink(join(outside, "prompts"), join(workspace, ".podkit/prompts"));
    return { workspace, outside, base };
  }

  it("really leads to the outside files (positive control)", async () => {
    const { workspace } = await linked();
    expect(await readFile(join(workspace, ".podkit/prompts/secret.md"), "utf8")).toBe(SECRET);
  });

  it.each(Object.entries(REFS))("refuses %s, naming the root and where it points", async (_, source) => {
    const { workspace, outside } = await linked();
    const error = await caught(render(PromptLoader.create({ workspace }), source));
    expect(PromptRootEscapeError.isInstance(error), String(error)).toBe(true);
    expect(error.message).toContain(
      `${join(workspace, ".podkit/prompts")} resolves to ${join(outside, "prompts")}`,
    );
  });

  it("refuses a pack value that includes through it, and a `$workspace` prompt_pack", async () => {
    const { workspace, outside, base } = await linked();
    await writeFiles(workspace, {
      ".podkit/prompts.toml": '[prompt]\nnotify_wrapper = "{% include \\"$workspace/secret\\" %}"\n',
    });
    const { sink } = collectWarnings();
    const viaInclude = await caught(PromptCatalog.load({ userConfigDir: null, workspace, onWarning: sink }));
    expect(PromptCatalogError.isInstance(viaInclude), String(viaInclude)).toBe(true);
    expect(viaInclude.message).toContain(`resolves to ${join(outside, "prompts")}`);
    await writeFiles(base, { "outside/prompts/pack.toml": '[prompt]\nnotify_wrapper = "x"\n' });
    const viaPack = await caught(
      PromptCatalog.load({
        userConfigDir: null,
        workspace,
        promptPack: "$workspace/pack.toml",
        onWarning: sink,
      }),
    );
    expect(PromptCatalogError.isInstance(viaPack), String(viaPack)).toBe(true);
    expect(viaPack.message).toContain(`resolves to ${join(outside, "prompts")}`);
  });
});

describe("the user config dir layout", () => {
  it("refuses `$user/…` when `<config>/prompts` links outside the config dir", async () => {
    const { base, outside } = await layout();
    const config = join(base, "config");
    await writeFiles(config, { "manifest.toml": "" });
    await symlink(join(outside, "prompts"), join(config, "prompts"));
    expect(await readFile(join(config, "prompts/secret.md"), "utf8")).toBe(SECRET); // positive control
    const error = await caught(
      render(PromptLoader.create({ userConfigDir: config }), '{% include "$user/secret" %}'),
    );
    expect(PromptRootEscapeError.isInstance(error), String(error)).toBe(true);
    expect(error.message).toContain(`$user prompt root is refused`);
    expect(error.message).toContain(`${join(config, "prompts")} resolves to ${join(outside, "prompts")}`);
  });

  it("refuses `<config>/prompts.toml` when it links outside the config dir", async () => {
    const { base, outside } = await layout();
    const config = join(base, "config");
    await writeFiles(config, { "manifest.toml": "" });
    await symlink(join(outside, "prompts.toml"), join(config, "prompts.toml"));
    const { sink } = collectWarnings();
    const error = await caught(
      PromptCatalog.load({ userConfigDir: config, workspace: null, onWarning: sink }),
    );
    expect(PromptCatalogError.isInstance(error), String(error)).toBe(true);
    expect(error.message).toContain(
      `${join(config, "prompts.toml")} resolves to ${join(outside, "prompts.toml")}`,
    );
  });
});

describe("links that stay inside their owner", () => {
  it("are followed: `.podkit` linking to a directory inside the workspace works", async () => {
    const { workspace } = await layout();
    await writeFiles(workspace, {
      "config/prompts/hello.md": "hello from inside",
      "config/prompts.toml": '[prompt]\nnotify_wrapper = "{% include \\"$workspace/hello\\" %}"\n',
    });
    await symlink(join(workspace, "config"), join(workspace, ".podkit"));
    expect(await render(PromptLoader.create({ workspace }), '{% include "$workspace/hello" %}')).toBe(
      "hello from inside",
    );
    const { sink } = collectWarnings();
    const catalog = await PromptCatalog.load({ userConfigDir: null, workspace, onWarning: sink });
    expect(catalog.render("notify_wrapper", { message: "m" })).toBe("hello from inside");
  });
});
