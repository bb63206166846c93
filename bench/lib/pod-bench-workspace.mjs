// The pod benches' shared set-up: the `lookup` tool of the scripted tool session
// (bench/lib/tool-session-double.mjs) and a temp workspace whose manifest uses it.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "../../packages/manifest/dist/index.js";
import { SessionLog } from "../../packages/session-store/dist/index.js";
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

/** A session of realistic tool turns, `entries` entries long, in `store`; resolves its id. */
export async function bigSession(store, entries) {
  const log = await SessionLog.create(store, {
    systemPrompt: "You are a bench pod.",
    config: { max_tokens: 8192 },
  });
  let turn = 0;
  while (log.entryCount < entries) {
    turn += 1;
    const call = { type: "tool_call", call_id: `toolu_${turn}`, name: "lookup", arguments: '{"query":"x"}' };
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: `Question number ${turn}?` },
      {
        kind: "llm_usage",
        history_len: turn * 4,
        input_tokens: 2000,
        cache_read_tokens: 1800,
        cache_write_tokens: 0,
        output_tokens: 30,
      },
      { kind: "assistant_item", item: call },
      {
        kind: "tool_result",
        item: {
          type: "tool_result",
          call_id: call.call_id,
          summary: "found x",
          content: "result line\n".repeat(20),
        },
      },
      {
        kind: "assistant_item",
        item: {
          type: "message",
          role: "assistant",
          content: [{ type: "text", text: "Here is the answer." }],
        },
      },
      { kind: "turn_end", turn },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
  }
  return log.state.sessionId;
}
