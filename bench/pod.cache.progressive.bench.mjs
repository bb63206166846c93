// What progressive disclosure costs the prompt cache (issue 43), against the provider double on
// the Anthropic wire.
//
// The session: a pod with 60 skills (`[skills]`, the builtin system prompt listing them) and the
// testkit's MCP server double with 200 tools (a child process over stdio), 30 turns in which the
// model loads 5 listed skills and one added to disk before turn 15 (announced by a notification),
// and uses 12 of the MCP tools; the other turns are plain answers.
// - progressive: the server is `defer = true`: every request carries the 200 definitions with
//   `defer_loading` plus Anthropic's BM25 tool search tool; the model searches on the provider
//   (a scripted `server_tool_use` and `tool_search_tool_result`), then calls the tool it found.
// - eager: the same server with `defer = false`: its 200 definitions are loaded on every request
//   and the model calls the tools directly.
//
// Deferred definitions are not part of the model's context: Anthropic leaves them out of the
// prompt (and its cache) and expands a `tool_reference` into its definition where the search
// result stands. `simulatePromptCache` reads the request bytes, so the progressive session is
// measured on that context: its requests with the `defer_loading` definitions dropped and each
// search result's references carrying the definitions they name.
//
// pod.cache.read_share.progressive: the share of the progressive session's input tokens
// `simulatePromptCache` bills as cache reads under Anthropic's rules. Aim ≥ 0.9.
// pod.cache.read_share.eager: the same for the eager session (the baseline).
// pod.progressive.input_tokens_per_request / pod.eager.input_tokens_per_request: the input tokens
// of an average request (cached or not), the simulator's estimate (UTF-8 bytes / 4).
// pod.progressive.wire_tokens_per_request: the progressive requests as sent, deferred
// definitions included (what the simulator would count without the adjustment above), and
// pod.cache.read_share.progressive.wire its share.
// pod.{progressive,eager}.uncached_tokens_per_request: of those, what is not a cache read
// (uncached input and cache writes), per request.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "../packages/manifest/dist/index.js";
import { Pod } from "../packages/pod/dist/index.js";
import {
  mcpServerDoubleCommand,
  simulatePromptCache,
  startProviderDouble,
} from "../packages/testkit/dist/index.js";

const TURNS = 30;
const SKILLS = 60;
const TOOLS = 200;
const ADDED_BEFORE_TURN = 15;
const ADDED_SKILL = {
  name: "release-notes",
  description: "Write release notes from the merged changes.",
  body: "# release-notes\n\nGroup the merged changes by package, newest first.",
};
/** Turn (1-based) → the skill loaded in it. */
const SKILL_TURNS = {
  2: "skill-03",
  6: "skill-17",
  10: "skill-29",
  13: "skill-42",
  18: ADDED_SKILL.name,
  20: "skill-58",
};
/** The 12 MCP tools used, in order, with valid arguments and the model's search query. */
const DEFERRED = [
  ["get_invoice", { id: "INV-1" }, "get invoice"],
  ["update_customer", { id: "C-9", fields: { tier: "gold" } }, "update customer"],
  ["search_ticket", { query: "login" }, "search helpdesk tickets"],
  ["list_repository", { limit: 5 }, "list repositories"],
  ["comment_issue", { id: "I-3", text: "looks good" }, "comment on issue"],
  ["export_order", { format: "csv" }, "export orders"],
  ["assign_task", { id: "T-2", assignee: "ana" }, "assign task"],
  ["archive_document", { id: "D-1" }, "archive document"],
  ["create_meeting", { title: "retro" }, "create meeting"],
  ["get_shipment", { id: "S-4" }, "get shipment"],
  ["search_product", { query: "lamp" }, "search product catalog"],
  ["list_payment", { limit: 10 }, "list payments"],
];
const DEFERRED_TURNS = [3, 4, 7, 8, 11, 12, 16, 17, 21, 22, 24, 26];

const text = (value) => ({ parts: [{ type: "text", text: value }] });

/** The scripted model's responses for turn `n` (1-based). */
function responsesFor(n, deferred) {
  const skill = SKILL_TURNS[n];
  if (skill !== undefined) {
    return [
      { parts: [{ type: "tool_call", id: `toolu_s${n}`, name: "skill", arguments: { name: skill } }] },
      text(`followed ${skill}`),
    ];
  }
  const at = DEFERRED_TURNS.indexOf(n);
  if (at < 0) return [text(`answer ${n}`)];
  const [tool, args, query] = DEFERRED[at];
  const name = `mcp__big__${tool}`;
  const call = { type: "tool_call", id: `toolu_d${n}`, name, arguments: args };
  const search = [
    { type: "server_tool_call", id: `srvtoolu_s${n}`, name: "tool_search_tool_bm25", input: { query } },
    {
      type: "server_tool_result",
      name: "tool_search",
      result: {
        type: "tool_search_tool_search_result",
        tool_references: [{ type: "tool_reference", tool_name: name }],
      },
    },
  ];
  return [{ parts: deferred ? [...search, call] : [call] }, text(`used ${tool}`)];
}

function skillMarkdown({ name, description, body }) {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n${body}\n`;
}

async function writeSkill(dir, skill) {
  await mkdir(join(dir, skill.name), { recursive: true });
  await writeFile(join(dir, skill.name, "SKILL.md"), skillMarkdown(skill));
}

/** One 30-turn session; resolves the captured requests. */
async function session(deferred) {
  const root = await mkdtemp(join(tmpdir(), "podkit-bench-progressive-"));
  const workspace = join(root, "project");
  const skillsDir = join(workspace, ".podkit", "skills");
  const { command, args } = mcpServerDoubleCommand({ tools: TOOLS });
  await mkdir(skillsDir, { recursive: true });
  await writeFile(
    join(workspace, ".podkit", "manifest.toml"),
    [
      '[pod]\nname = "bench"',
      '[model]\nref = "anthropic/claude-sonnet-4-5"',
      "[skills]",
      `[[mcp.server]]\nname = "big"\ncommand = ${JSON.stringify(command)}\nargs = ${JSON.stringify(args)}\ndefer = ${deferred}`,
      '[sandbox]\nbackend = "none"',
      "",
    ].join("\n"),
  );
  for (let i = 1; i <= SKILLS; i++) {
    const n = String(i).padStart(2, "0");
    await writeSkill(skillsDir, {
      name: `skill-${n}`,
      description: `Handles topic ${i}: use it when the task is about topic number ${i}.`,
      body: `# skill-${n}\n\nStep 1 for topic ${i}.\nStep 2 for topic ${i}.`,
    });
  }
  const double = await startProviderDouble({ wire: "anthropic" });
  try {
    const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
    const pod = await Pod.fromManifest(loaded, {
      model: double.baseUrl,
      env: { ANTHROPIC_API_KEY: "bench" },
      onWarning: () => {},
    });
    try {
      for (let n = 1; n <= TURNS; n++) {
        if (n === ADDED_BEFORE_TURN) await writeSkill(skillsDir, ADDED_SKILL);
        double.enqueue(...responsesFor(n, deferred));
        const result = await pod.run(`Question number ${n}?`);
        if (result.status !== "finished") throw new Error(`turn ${n}: ${JSON.stringify(result)}`);
      }
    } finally {
      await pod.close();
    }
    const tools = new Set(double.requests.map((request) => JSON.stringify(request.body.tools)));
    const systems = new Set(double.requests.map((request) => JSON.stringify(request.body.system)));
    if (tools.size !== 1 || systems.size !== 1) {
      throw new Error(`the prefix changed: ${tools.size} tools arrays, ${systems.size} system prompts`);
    }
    return double.requests;
  } finally {
    await double.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** A request as the model's context holds it: deferred definitions out, found ones where the search found them. */
function inContext(request) {
  const { body } = request;
  const definitions = new Map(
    body.tools.filter((tool) => tool.defer_loading === true).map((t) => [t.name, t]),
  );
  const expand = (block) => {
    if (block.type !== "tool_search_tool_result") return block;
    const tool_references = block.content.tool_references.map((reference) => {
      const { defer_loading: _deferred, ...definition } = definitions.get(reference.tool_name) ?? {};
      return { ...reference, definition };
    });
    return { ...block, content: { ...block.content, tool_references } };
  };
  const messages = body.messages.map((message) =>
    Array.isArray(message.content) ? { ...message, content: message.content.map(expand) } : message,
  );
  const tools = body.tools.filter((tool) => tool.defer_loading !== true);
  return { ...request, body: { ...body, tools, messages } };
}

const perRequest = (report, requests) => Math.round(report.totals.inputTokens / requests.length);

const progressive = await session(true);
const eager = await session(false);
const progressiveReport = simulatePromptCache(progressive.map(inContext), "anthropic");
const wireReport = simulatePromptCache(progressive, "anthropic");
const eagerReport = simulatePromptCache(eager, "anthropic");

console.log(`# progressive: ${progressive.length} requests; eager: ${eager.length} requests`);
console.log(`BENCH pod.cache.read_share.progressive ${progressiveReport.cachedShare.toFixed(3)} ratio`);
console.log(`BENCH pod.cache.read_share.eager ${eagerReport.cachedShare.toFixed(3)} ratio`);
console.log(`BENCH pod.cache.read_share.progressive.wire ${wireReport.cachedShare.toFixed(3)} ratio`);
console.log(
  `BENCH pod.progressive.input_tokens_per_request ${perRequest(progressiveReport, progressive)} tokens`,
);
console.log(`BENCH pod.eager.input_tokens_per_request ${perRequest(eagerReport, eager)} tokens`);
console.log(`BENCH pod.progressive.wire_tokens_per_request ${perRequest(wireReport, progressive)} tokens`);
for (const [name, report, requests] of [
  ["progressive", progressiveReport, progressive],
  ["eager", eagerReport, eager],
]) {
  const fresh = report.totals.uncachedTokens + report.totals.cacheWriteTokens;
  console.log(`BENCH pod.${name}.uncached_tokens_per_request ${Math.round(fresh / requests.length)} tokens`);
}
