// Benchmarks of @podkit/pod's prompt machinery against stock nunjucks 3.2.4 in the same run.
//   BENCH pod.template.render.ratio  a ~5 KB template with three includes: podkit's hardened
//                                    environment vs stock nunjucks rendering precompiled templates
//   BENCH pod.catalog.render.ratio   catalog.render of every PodPrompt key vs the same sources
//                                    precompiled in stock nunjucks
//   BENCH pod.catalog.load_ms        PromptCatalog.load with builtin, user, workspace and manifest
//                                    layers present (fresh loader and environment each time)
// Both sides render the same text: outputs are compared before timing. Requires a built package.
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
// Internals (the loader and the source normalizer) come from their files: the package's public
// surface is the catalog, the system prompt template and loadPodResources.
import { PromptCatalog } from "../packages/pod/dist/catalog/prompt-catalog.js";
import { PromptLoader } from "../packages/pod/dist/prompt-ref/prompt-loader.js";
import { normalizeTemplateSource } from "../packages/pod/dist/template/environment.js";

const require = createRequire(new URL("../packages/pod/package.json", import.meta.url));
const nunjucks = require("nunjucks");

const dir = await mkdtemp(join(tmpdir(), "podkit-bench-prompts-"));
const write = async (path, text) => {
  await mkdir(dirname(join(dir, path)), { recursive: true });
  await writeFile(join(dir, path), text);
};

function stockEnvironment(sources) {
  const loader = {
    getSource: (name) => (name in sources ? { src: sources[name], path: name, noCache: false } : null),
  };
  const env = new nunjucks.Environment(loader, { autoescape: false });
  for (const name of Object.keys(sources)) env.getTemplate(name, true); // precompile everything
  return env;
}

/** Median time per call (µs) of `a` and `b`, measured in alternating batches. */
function compare(a, b, { batch = 500, rounds = 40 } = {}) {
  const times = { a: [], b: [] };
  const run = (fn, into) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) fn();
    into.push(Number(process.hrtime.bigint() - start) / 1000 / batch);
  };
  for (let i = 0; i < 10; i++) {
    run(a, []); // warm up both (JIT, caches)
    run(b, []);
  }
  globalThis.gc?.();
  for (let i = 0; i < rounds; i++) {
    // alternate the order so drift (GC, frequency) hits both sides alike
    const [first, second] =
      i % 2
        ? [
            [a, times.a],
            [b, times.b],
          ]
        : [
            [b, times.b],
            [a, times.a],
          ];
    run(...first);
    run(...second);
  }
  const median = (xs) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  return { a: median(times.a), b: median(times.b) };
}

try {
  // ---- 1. a 5 KB template with includes ------------------------------------------------------
  const paragraph = (n) =>
    `Paragraph ${n}: work carefully inside {{ cwd }}, read before you write, and report what changed. `.repeat(
      9,
    );
  const includes = {
    "$workspace/bench/tools.md": `## Tools\n{% for t in tools %}- {{ t | upper }}{% if not loop.last %}\n{% endif %}{% endfor %}\n${paragraph(1)}`,
    "$workspace/bench/scope.md": `## Scope\n{{ scope.summary }}\nWritable: {{ scope.writable | join(", ") }}\n${paragraph(2)}`,
    "$workspace/bench/rules.md": `{% macro rule(n, text) %}{{ n }}. {{ text | trim }}{% endmacro %}## Rules\n{% for r in rules %}{{ rule(loop.index, r) }}\n{% endfor %}${paragraph(3)}`,
  };
  const main = [
    "You are a careful agent. Today is {{ date }} ({{ datetime }}).",
    paragraph(0),
    '{% include "$workspace/bench/tools.md" %}',
    '{% include "$workspace/bench/scope.md" %}',
    '{% include "$workspace/bench/rules.md" %}',
    "{% if files.agents_md is defined %}## AGENTS.md\n{{ files.agents_md }}{% endif %}",
    "Language: {{ language | default('English') }}.",
    paragraph(4),
  ].join("\n\n");
  for (const [ref, text] of Object.entries(includes))
    await write(`ws/.podkit/prompts/${ref.slice("$workspace/".length)}`, text);
  const data = {
    date: "2026-04-15",
    time: "09:30:00",
    datetime: "2026-04-15T09:30:00Z",
    cwd: "/work/project",
    scope: {
      readable: ["/work/project"],
      writable: ["/work/project"],
      summary: "Readable:\n  - /work/project\nWritable:\n  - /work/project",
    },
    tools: ["edit", "glob", "grep", "read", "write"],
    files: { agents_md: "Use pnpm. Run the tests before you commit. ".repeat(8) },
    language: "English",
    rules: Array.from(
      { length: 8 },
      (_, i) => ` Rule number ${i + 1}: keep changes small and explain them. `,
    ),
  };

  const loader = PromptLoader.create({ workspace: join(dir, "ws") });
  const ours = await loader.link(loader.environment.compile("bench main", main));
  const renderOurs = () => loader.environment.render(ours, data).text;
  const stock = stockEnvironment({ main, ...includes });
  const stockMain = stock.getTemplate("main", true);
  const renderStock = () => stockMain.render(data);
  const text = renderOurs();
  assert.equal(text, renderStock(), "both environments must render the same text");
  assert.ok(
    main.length + Object.values(includes).join("").length > 4500,
    "template sources total about 5 KB",
  );
  const t = compare(renderOurs, renderStock);
  console.log(
    `# template: ${(main.length + Object.values(includes).join("").length) / 1000} KB source, ${text.length / 1000} KB output`,
  );
  console.log(`BENCH pod.template.render_us ${t.a.toFixed(2)} us`);
  console.log(`BENCH pod.template.render.stock_us ${t.b.toFixed(2)} us`);
  console.log(`BENCH pod.template.render.ratio ${(t.a / t.b).toFixed(2)} x`);

  // ---- 2. catalog.render of every key ---------------------------------------------------------
  const catalog = await PromptCatalog.loadBuiltinOnly();
  const contexts = {
    compact_system: {
      summary_target_tokens: 2000,
      summary_max_tokens: 4000,
      auto_read_budget_tokens: 8000,
      items: 40,
      summarised: 30,
      retained: 10,
      kept_from: "#30 [User] Fix the failing test",
    },
    notify_wrapper: { message: "The nightly build failed: 3 tests." },
    working_boundaries_section: { scope_summary: data.scope.summary },
    agents_md_section: { agents_md: data.files.agents_md },
    context_update_section: {
      sections: [
        { id: "memory", text: "Prefer pnpm." },
        { id: "tasks", text: "None." },
      ],
    },
    memory_extract_system: { language: "English" },
    memory_consolidation_system: { language: "English" },
    resident_memory_section: { summary: "Decisions: use pnpm; keep PRs small." },
    memory_knowledge_section: {
      knowledge: [{ slug: "release-steps", description: "How to cut a release; use when releasing." }],
    },
    memory_consolidation_tidy: { protection_threshold: 3 },
    memory_consolidation_input: {
      staging: [
        {
          id: "s1",
          session_id: "session-1",
          created_at: "2026-04-15T09:00:00Z",
          items: [
            {
              id: "s1-d1",
              kind: "decision",
              topic: "pnpm layout",
              decision: "Use pnpm.",
              reason: "Hoisting.",
            },
            { id: "s1-q1", kind: "discussion", topic: "releases", summary: "Weekly?", settled: false },
            { id: "s1-a1", kind: "attempt", topic: "npm", tried: "npm workspaces", observed: "broke" },
            { id: "s1-r1", kind: "request", topic: "language", request: "Answer in English." },
          ],
        },
      ],
      summary: "",
      decisions: { full: [{ slug: "use-pnpm", text: "---\nstatus: open\n---\n\nUse pnpm." }], listed: [] },
      requests: { full: [], listed: [{ slug: "answer-in-english", first_line: "Answer in English." }] },
      protection_threshold: 3,
      usage: [{ kind: "decision", slug: "use-pnpm", used: 3, shown: 1, protected: true }],
      hints: { replaced_chains: [], sources_overflow: [], similar_slugs: [], lint_warnings: [] },
      candidates: [],
    },
    compact_rewrite_oversize_summary: { summary_tokens: 5200, summary_max_tokens: 4000 },
    compact_tool_refused: { tool: "write_summary" },
    compact_pod_tool_refused: { tool: "bash" },
    notes_truncation_notice: { file: ".podkit/NOTES.md", max_bytes: 16384 },
    interrupt_system_note: { trigger: "notify" },
    compacted_context_summary: { summary: "The user asked for a fix of the ticket id check; it landed." },
    compacted_file_attachment: { path: "src/tickets.js", content: "export const ok = true;\n" },
    compacted_references: {
      references: [
        { target: "src/tickets.js", note: "the fixed check" },
        { target: "test/tickets.test.js", note: "" },
      ],
    },
  };
  const entries = catalog.entries();
  const stockSources = {};
  for (const entry of entries) stockSources[entry.key] = normalizeTemplateSource(entry.source);
  for (const name of [
    "compact_system",
    "working_boundaries_section",
    "context_update_section",
    "interrupt_system_note",
    "memory_extract_system",
    "memory_consolidation_system",
    "memory_consolidation_input",
  ]) {
    const linked = await loader.load(`$podkit/internal/${name}`);
    stockSources[`$podkit/internal/${name}`] = normalizeTemplateSource(linked.compiled.source);
  }
  const stockCatalog = stockEnvironment(stockSources);
  const stockTemplates = entries.map((e) => stockCatalog.getTemplate(e.key, true));
  const renderAllOurs = () => entries.map((e) => catalog.render(e.key, contexts[e.key] ?? {}));
  const renderAllStock = () => entries.map((e, i) => stockTemplates[i].render(contexts[e.key] ?? {}));
  assert.deepEqual(renderAllOurs(), renderAllStock(), "both environments must render the same prompts");
  const c = compare(renderAllOurs, renderAllStock, { batch: 50 });
  console.log(`BENCH pod.catalog.render_all_us ${c.a.toFixed(2)} us`);
  console.log(`BENCH pod.catalog.render_all.stock_us ${c.b.toFixed(2)} us`);
  console.log(`BENCH pod.catalog.render.ratio ${(c.a / c.b).toFixed(2)} x`);

  // ---- 3. catalog load with all four layers ---------------------------------------------------
  await write(
    "config/prompts.toml",
    '[prompt]\ninterrupt_system_note = "[user note]"\nnotify_wrapper = """[Note]\n{% include "$user/notify" %}"""\n',
  );
  await write("config/prompts/notify.md", "{{ message }}\n");
  await write(
    "ws/.podkit/prompts.toml",
    '[prompt]\nresident_memory_section = "## Memory\\n{{ summary }}"\nagents_md_section = """## AGENTS.md\n{{ agents_md }}"""\n',
  );
  await write(
    "ws/agents/pack.toml",
    '[prompt]\ncompact_system = """Be brief.\n{% include "$podkit/internal/compact_system" %}"""\n',
  );
  const layers = {
    userConfigDir: join(dir, "config"),
    workspace: join(dir, "ws"),
    promptPack: "pack.toml",
    manifestDir: join(dir, "ws/agents"),
    onWarning: () => {},
  };
  const check = await PromptCatalog.load(layers);
  // Five keys come from the upper layers; every other key (however many the pod ships) is builtin.
  const overridden = ["manifest", "user", "user", "workspace", "workspace"];
  const layerNames = check
    .entries()
    .map((e) => e.layer)
    .sort();
  assert.deepEqual(layerNames, [
    ...Array(layerNames.length - overridden.length).fill("builtin"),
    ...overridden,
  ]);
  const loads = [];
  for (let i = 0; i < 60; i++) {
    const start = process.hrtime.bigint();
    await PromptCatalog.load(layers);
    loads.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  loads.sort((a, b) => a - b);
  console.log(`BENCH pod.catalog.load_ms ${loads[Math.floor(loads.length / 2)].toFixed(2)} ms`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
