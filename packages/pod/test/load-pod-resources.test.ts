import { join } from "node:path";
import { loadManifest, type PodkitEnv } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import { PromptRenderError } from "../src/catalog/errors.js";
import { loadPodResources } from "../src/resources/load-pod-resources.js";
import { TemplateLimitError } from "../src/template/errors.js";
import { caught, collectWarnings, useTempDirs, writeFiles } from "./helpers.js";

const tempDir = useTempDirs();

const pack = (values: Record<string, string>) =>
  `[prompt]\n${Object.entries(values)
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join("\n")}\n`;

/** A home with a user config dir, a workspace with `.podkit/`, and a manifest inside it. */
async function world() {
  const root = await tempDir("resources");
  const home = join(root, "home");
  const workspace = join(root, "project");
  const env: PodkitEnv = { cwd: join(workspace, "src"), home, env: {} };
  await writeFiles(root, {
    "home/.config/podkit/prompts.toml": pack({
      interrupt_system_note: '{% include "$user/notes/interrupt" %}',
      notify_wrapper: "user {{ message }}",
    }),
    "home/.config/podkit/prompts/notes/interrupt.md": "USER NOTE\n",
    "project/.podkit/prompts.toml": pack({
      notify_wrapper: '{% include "$workspace/notify" %}',
      compact_nudge_missing_summary: "workspace nudge",
    }),
    "project/.podkit/prompts/notify.md": "WS {{ message }}\n",
    "project/.podkit/manifest.toml": '[pod]\nname = "ws"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n',
    "project/src/.keep": "",
    "project/pods/reviewer.toml": '[pod]\nname = "reviewer"\nprompt_pack = "packs/role.toml"\n',
    "project/pods/packs/role.toml": pack({ compact_nudge_missing_summary: "manifest nudge" }),
  });
  return { env, workspace, home };
}

describe("loadPodResources: the one entry point to a pod's prompts", () => {
  it("[13] through loadManifest, user and workspace packs take effect and $user/$workspace includes resolve", async () => {
    const { env, workspace, home } = await world();
    const loaded = await loadManifest({ env });
    expect(loaded.userConfigDir).toBe(join(home, ".config", "podkit"));
    expect(loaded.workspace).toBe(workspace);
    const { warnings, sink } = collectWarnings();
    const { catalog, loader } = await loadPodResources(loaded, { onWarning: sink });
    expect(catalog.render("interrupt_system_note", { trigger: "user" })).toBe("USER NOTE");
    expect(catalog.explain("interrupt_system_note").layer).toBe("user");
    expect(catalog.render("notify_wrapper", { message: "m" })).toBe("WS m");
    expect(catalog.explain("notify_wrapper").layer).toBe("workspace");
    expect(catalog.explain("compact_nudge_missing_summary").layer).toBe("workspace");
    expect(loader.roots).toMatchObject({
      user: join(home, ".config", "podkit", "prompts"),
      workspace: join(workspace, ".podkit", "prompts"),
    });
    expect(warnings).toEqual([]);
  });

  it("applies the manifest's prompt_pack as the fourth layer, resolved against the manifest's directory", async () => {
    const { env, workspace } = await world();
    const loaded = await loadManifest({ env, file: join(workspace, "pods", "reviewer.toml") });
    const { catalog } = await loadPodResources(loaded, { onWarning: () => {} });
    expect(catalog.render("compact_nudge_missing_summary")).toBe("manifest nudge");
    expect(catalog.explain("compact_nudge_missing_summary")).toMatchObject({
      layer: "manifest",
      file: join(workspace, "pods", "packs", "role.toml"),
    });
    expect(catalog.explain("notify_wrapper").layer).toBe("workspace");
  });

  it("takes the XDG config dir the manifest cascade used, not a second guess", async () => {
    const { env, workspace } = await world();
    const xdg = join(workspace, "..", "xdg");
    await writeFiles(xdg, { "podkit/prompts.toml": pack({ interrupt_system_note: "XDG NOTE" }) });
    const loaded = await loadManifest({ env: { ...env, env: { XDG_CONFIG_HOME: xdg } } });
    const { catalog } = await loadPodResources(loaded, { onWarning: () => {} });
    expect(catalog.render("interrupt_system_note", { trigger: "user" })).toBe("XDG NOTE");
  });
});

describe("loadPodResources: render limits", () => {
  it("applies renderLimits to every catalog value (a value within the defaults fails a tighter budget)", async () => {
    const { env } = await world();
    const loaded = await loadManifest({ env });
    const value = "{% for i in range(50) %}{{ message }}{% endfor %}";
    await writeFiles(loaded.workspace, { ".podkit/prompts.toml": pack({ notify_wrapper: value }) });
    const roomy = await loadPodResources(loaded, { onWarning: () => {} });
    expect(roomy.catalog.render("notify_wrapper", { message: "ab" })).toBe("ab".repeat(50));
    const tight = await loadPodResources(loaded, { onWarning: () => {}, renderLimits: { maxOutput: 20 } });
    const error = await caught(() => tight.catalog.render("notify_wrapper", { message: "ab" }));
    expect(PromptRenderError.isInstance(error)).toBe(true);
    expect(TemplateLimitError.isInstance(error.cause)).toBe(true);
  });
});
