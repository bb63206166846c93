// The pod benches' shared set-up: the `lookup` tool of the scripted tool session
// (bench/lib/tool-session-double.mjs) and a temp workspace whose manifest uses it.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "../../packages/manifest/dist/index.js";
import { definePodkitToolPackage } from "../../packages/tools/dist/index.js";

export const REF = "anthropic/claude-sonnet-4-5";

export const lookup = () => ({
  name: "lookup",
  description: "Looks something up.",
  inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
  execute: async (args) => ({ summary: `found ${args.query}`, content: "result line\n".repeat(20) }),
});

export const toolPackage = definePodkitToolPackage({ name: "bench-tools", tools: () => [lookup] });

/** The same `lookup`, its output `lines` lines of detail (the cache and long-session benches). */
export function lookupPackage(lines) {
  const content = "result line with some detail\n".repeat(lines);
  const sized = () => ({
    ...lookup(),
    execute: async (args) => ({ summary: `found ${args.query}`, content }),
  });
  return definePodkitToolPackage({ name: "bench-tools", tools: () => [sized] });
}

/** A temp `<root>/project` workspace with a manifest for `REF`, no builtin tools and `extra`; remove `root` after. */
export async function workspaceWithManifest(prefix, extra = "") {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const workspace = join(root, "project");
  await mkdir(join(workspace, ".podkit"), { recursive: true });
  await writeFile(
    join(workspace, ".podkit", "manifest.toml"),
    `[pod]\nname = "bench"\n[model]\nref = "${REF}"\n[tools]\nbuiltin = []\n${extra}`,
  );
  const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
  return { root, loaded };
}
