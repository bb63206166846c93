// Docs that run: every example of the README and docs/*.md either type-checks / runs here against
// the built packages, or says right above it why not. Needs a build (npm test builds first;
// turbo runs this after the CLI's build and its dependencies').
//
// The rule, per fenced block:
// - ```ts / ```typescript / ```tsx: type-checked as a module of a consumer project outside this
//   repository (strict, NodeNext, the built `@podkit/*` packages in its node_modules, imported as
//   `@podkit/...` like any user would). A fragment that uses things the page's prose introduces
//   (`loaded`, `signal`, …) names them with `<!-- docs-test: context a, b -->`; the declarations
//   are in scripts/docs-snippet-contexts.ts. A listing of a package's interface says
//   `<!-- docs-test: matches Interceptor in @podkit/llm-worker -->` and must be assignable to and
//   from the package's own declaration. `<!-- docs-test: run -->` also executes it (transpiled, in
//   the page's workspace).
// - ```sh / ```bash / ```shell: run, line by line in one bash (`set -e`; `cd` and `export` carry
//   over), against the built CLI (`podkit` on PATH is packages/cli/dist/bin.js), in the page's
//   scratch workspace with an empty HOME and none of the caller's environment, stdin closed.
//   `/path/to/podkit` stands for this clone. `<!-- docs-test: setup <command> -->` runs a command
//   first (`mkdir your-project`); `<!-- docs-test: clone -->` runs from a scratch copy of a clone's
//   root (examples/ copied, packages/ linked).
// - Skipped only with a reason: `<!-- docs-test: skip (reason) -->` for a whole block, or
//   `<!-- docs-test: skip-commands "podkit run" "podkit resume" (reason) -->` for the command lines
//   starting so. A command is skipped exactly when it cannot run offline: it needs an API key or a
//   network service beyond 127.0.0.1 (a model, a database, a registry), is a server that runs until
//   stopped, or is this repository's own set-up/test command. The last test lists every skip.
// - Other blocks (toml, json, output) are prose, except `<!-- docs-test: file <path> -->`, which
//   writes the block to that path of the page's workspace for the examples after it.
// A page's examples share one workspace and run in the page's order, as a reader follows them.
// Directives stand on the lines right above the fence; one anywhere else fails the test.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  classify,
  createConsumerProject,
  DocsDirectiveError,
  docPages,
  emitRunnable,
  exampleEnv,
  extractFences,
  failedCommand,
  pageWorkspace,
  runProcess,
  SH_LANGS,
  shellScript,
  TS_LANGS,
  typecheckFences,
} from "./docs-snippets.mjs";

const pages = docPages();
const { typescript, skipped } = classify(pages);
const consumer = createConsumerProject();
const skippedCommands = [];
const ran = { shellCommands: 0, shellBlocks: 0, executed: [] };

afterAll(() => rmSync(consumer.dir, { recursive: true, force: true }));

const has = (fence, verb) => fence.directives.some((d) => d.verb === verb);

/** Runs one page's examples in order in its workspace; returns the problems, `[]` when all ran. */
async function runPage(page) {
  const problems = [];
  const fences = extractFences(page.text, page.file).filter((fence) => !has(fence, "skip"));
  for (const fence of fences) {
    const where = `${fence.file}:${fence.line}`;
    const cwd = pageWorkspace(consumer.project, page.file, { clone: has(fence, "clone") });
    const file = fence.directives.find((d) => d.verb === "file");
    if (file) {
      mkdirSync(dirname(join(cwd, file.path)), { recursive: true });
      writeFileSync(join(cwd, file.path), `${fence.code}\n`);
    } else if (SH_LANGS.has(fence.lang)) {
      const { script, commands, skipped: left, offset } = shellScript(fence);
      skippedCommands.push(...left);
      const result = await runProcess("bash", ["-c", script], { cwd, env: exampleEnv(consumer) });
      ran.shellBlocks++;
      ran.shellCommands += commands;
      if (result.code !== 0) {
        const at = failedCommand(result.stderr, fence, offset) ?? `${where}: exit ${result.code}`;
        problems.push(`${at}\n${result.stdout}${result.stderr}`.trim());
      }
    } else if (TS_LANGS.has(fence.lang) && has(fence, "run")) {
      const module = emitRunnable(fence, consumer.project);
      const result = await runProcess(process.execPath, [module], { cwd, env: exampleEnv(consumer) });
      ran.executed.push({ where, ms: Math.round(result.ms), stdout: result.stdout.trim() });
      if (result.code !== 0)
        problems.push(`${where}: exit ${result.code}\n${result.stdout}${result.stderr}`.trim());
    }
  }
  return problems;
}

describe("the docs test catches what it is for (positive controls)", () => {
  const page = (text) => ({ file: "docs/control.md", text });

  it("reads fences and the directives right above them, and refuses any directive it cannot follow", () => {
    const [fence] = extractFences(
      "text\n<!-- docs-test: context loaded, signal -->\n```ts\nconst x = 1;\n```\n",
      "docs/control.md",
    );
    expect(fence).toMatchObject({ lang: "ts", line: 3, codeLine: 4, code: "const x = 1;" });
    expect(fence.directives).toEqual([{ verb: "context", names: ["loaded", "signal"] }]);
    const refused = [
      "<!-- docs-test: skip -->\n```sh\nls\n```\n", // no reason
      "<!-- docs-test: skip () -->\n```sh\nls\n```\n", // an empty reason
      "<!-- docs-test: skip-commands podkit run (needs a key) -->\n```sh\nls\n```\n", // unquoted
      "<!-- docs-test: ignore (why not) -->\n```sh\nls\n```\n", // unknown
      "<!-- docs-test: skip (needs a key) -->\n\nSome prose.\n```sh\nls\n```\n", // not above a fence
    ];
    for (const text of refused)
      expect(() => extractFences(text, "docs/control.md")).toThrow(DocsDirectiveError);
    // A skip-commands prefix matching no command of its block is stale: refused too.
    const [stale] = extractFences(
      '<!-- docs-test: skip-commands "podkit run" (needs a key) -->\n```sh\npodkit init\n```\n',
      "docs/control.md",
    );
    expect(() => shellScript(stale)).toThrow(/matches no command/);
  });

  it("reports a TypeScript snippet that does not type-check, at its line in the page", () => {
    const { typescript: fences } = classify([
      page(
        [
          "```ts",
          'import { loadManifest } from "@podkit/manifest";',
          'const loaded = await loadManifest({ file: "pod.toml" });',
          "```",
          "",
          "```ts",
          'import { loadManifest } from "@podkit/manifest";',
          "",
          'const loaded = await loadManifest({ file: "pod.toml", overlay: ["x=1"] });',
          "loaded.manifest.pod.nmae;",
          "```",
          "",
          "<!-- docs-test: matches ToolOutput in @podkit/llm-worker -->",
          "```ts",
          "interface ToolOutput { summary: string; content?: number }",
          "```",
        ].join("\n"),
      ),
    ]);
    const results = typecheckFences(fences, consumer.project);
    const [good, broken, drifted] = fences.map((fence) => results.get(fence));
    expect(good).toEqual([]);
    expect(broken).toEqual([
      expect.stringMatching(/^docs\/control\.md:9: TS2561 .*'overlay'/),
      expect.stringMatching(/^docs\/control\.md:10: TS\d+ .*'nmae'/),
    ]);
    expect(drifted).not.toEqual([]);
    for (const problem of drifted)
      expect(problem).toMatch(/^docs\/control\.md:14 \(the listing differs from the package's declaration\)/);
  });

  it("reports a shell example that fails, at its line in the page, and runs the lines before it", async () => {
    const [fence] = extractFences(
      ["```sh", "podkit --version", "podkit manifest show no-such.toml", "echo never", "```"].join("\n"),
      "docs/control.md",
    );
    const { script, offset } = shellScript(fence);
    const cwd = pageWorkspace(consumer.project, "docs/control-shell.md");
    const result = await runProcess("bash", ["-c", script], { cwd, env: exampleEnv(consumer) });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+/); // podkit --version ran
    expect(result.stdout).not.toContain("never");
    expect(result.code).not.toBe(0);
    expect(failedCommand(result.stderr, fence, offset)).toMatch(
      /^docs\/control\.md:3: exit 1: podkit manifest show/,
    );
  });
});

describe("every TypeScript snippet type-checks against the built packages", () => {
  let results;
  beforeAll(() => {
    results = typecheckFences(typescript, consumer.project);
  }, 120_000);

  it("finds the snippets", () => {
    expect(typescript.length).toBeGreaterThan(20);
  });

  for (const fence of typescript) {
    it(`${fence.file}:${fence.line}`, () => {
      expect(results.get(fence)).toEqual([]);
    });
  }
});

describe("every offline example runs against the built CLI, page by page", () => {
  const runnable = pages.filter((page) =>
    extractFences(page.text, page.file).some(
      (fence) => !has(fence, "skip") && (SH_LANGS.has(fence.lang) || has(fence, "run")),
    ),
  );

  for (const page of runnable) {
    it(page.file, async () => {
      expect(await runPage(page)).toEqual([]);
    });
  }

  it("ran the quickstart's code, which answered through the provider double", () => {
    const quickstart = ran.executed.find((run) => run.where.startsWith("docs/quickstart.md:"));
    expect(quickstart?.stdout).toMatch(/^finished Hello! I am greeter/);
    console.log(`docs test: the quickstart's code ran in ${quickstart?.ms} ms`);
  });
});

describe("the sub-pod role example", () => {
  // The role of docs/subpods.md once put `[object Object]` into its child's system prompt; the
  // child built from that exact block must get the scope summary as text.
  it("gives the child a system prompt with its scope summary as text", async () => {
    const page = pages.find((p) => p.file === "docs/subpods.md");
    const role = extractFences(page.text, page.file).find((fence) => fence.lang === "toml");
    const workspace = pageWorkspace(consumer.project, "subpods-role");
    mkdirSync(join(workspace, ".podkit", "packs"), { recursive: true });
    mkdirSync(join(workspace, "src"));
    writeFileSync(join(workspace, ".podkit", "packs", "reviewer.toml"), "");
    writeFileSync(
      join(workspace, ".podkit", "manifest.toml"),
      `[pod]\nname = "parent"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n\n${role.code}\n`,
    );
    const script = join(consumer.project, "run-subpods-role.mjs");
    writeFileSync(
      script,
      `import { loadManifest } from "@podkit/manifest";
import { Pod } from "@podkit/pod";
import { startProviderDouble } from "@podkit/testkit";
const double = await startProviderDouble({ wire: "anthropic", responses: [
  { parts: [{ type: "tool_call", name: "spawn_pod", arguments: { role: "reviewer", task: "look" } }] },
  { parts: [{ type: "text", text: "looked" }] },
  { parts: [{ type: "text", text: "done" }] },
] });
const pod = await Pod.fromManifest(await loadManifest(), { model: double.baseUrl, env: { ANTHROPIC_API_KEY: "x" } });
try {
  await pod.run("get a review");
  console.log(JSON.stringify(double.requests.map((request) => request.body.system[0].text)));
} finally {
  await pod.close();
  await double.close();
}
`,
    );
    const result = await runProcess(process.execPath, [script], {
      cwd: workspace,
      env: exampleEnv(consumer),
    });
    expect(result.stderr).toBe("");
    const prompts = JSON.parse(result.stdout);
    const child = prompts.find((prompt) => prompt.startsWith("You review changes."));
    expect(child).toContain(`You review changes. Readable:\n  - ${join(workspace, "src")}`);
    expect(prompts.join("\n")).not.toContain("[object Object]");
  });
});

describe("what was left out", () => {
  it("every skip has its reason, and the test says which and why", () => {
    const lines = [
      ...skipped.map((s) => `  ${s.where} (${s.kind} block): ${s.reason}`),
      ...skippedCommands.map((s) => `  ${s.where} \`${s.command.replace(/\s+#\s.*$/, "")}\`: ${s.reason}`),
    ];
    for (const skip of [...skipped, ...skippedCommands]) expect(skip.reason.length).toBeGreaterThan(5);
    console.log(
      [
        `docs test: ${typescript.length} TypeScript snippets type-checked (${ran.executed.length} also run); ` +
          `${ran.shellBlocks} shell blocks run (${ran.shellCommands} commands); ` +
          `skipped: ${skipped.length} blocks and ${skippedCommands.length} commands:`,
        ...lines,
      ].join("\n"),
    );
  });
});
