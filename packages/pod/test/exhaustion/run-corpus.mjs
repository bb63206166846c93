// Child process of exhaustion.test.ts: renders every corpus template in one placement against
// the built package and prints one JSON line per case with the outcome, the CPU time it took (and
// the wall time, for information) and the peak memory of the process above its baseline. Run
// with --expose-gc.
//   node --expose-gc run-corpus.mjs <placement> [case name] [--unbounded]
// `--unbounded` lifts every render limit (the positive control: the attack without the budget).
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PromptCatalog } from "../../dist/catalog/prompt-catalog.js";
import { PodkitPodError } from "../../dist/errors.js";
import { PromptLoader } from "../../dist/prompt-ref/prompt-loader.js";
import { SystemPromptTemplate } from "../../dist/system-prompt/system-prompt-template.js";
import { TemplateEnvironment } from "../../dist/template/environment.js";
import { TemplateLimitError, TemplateRenderError, TemplateSyntaxError } from "../../dist/template/errors.js";
import { CORPUS, WORKSPACE_FILES } from "./corpus.mjs";

const args = process.argv.slice(2);
const unbounded = args.includes("--unbounded");
const [placement, only] = args.filter((a) => a !== "--unbounded");
const NO_LIMITS = {
  maxSteps: Number.POSITIVE_INFINITY,
  maxLength: Number.POSITIVE_INFINITY,
  maxOutput: Number.POSITIVE_INFINITY,
  maxProduced: Number.POSITIVE_INFINITY,
  maxDepth: Number.POSITIVE_INFINITY,
};
const loaderFor = (workspace) =>
  PromptLoader.create(
    { workspace },
    unbounded ? { environment: new TemplateEnvironment({ limits: NO_LIMITS }) } : undefined,
  );
const context = {
  date: "2026-04-15",
  time: "09:30:00",
  datetime: "2026-04-15T09:30:00Z",
  cwd: "/work/project",
  scope: { readable: ["/work/project"], writable: ["/work/project"], summary: "Readable: /work/project" },
  tools: ["alpha", "beta"],
  files: {},
  language: "English",
};

async function workspaceWith(files) {
  const dir = await mkdtemp(join(tmpdir(), "podkit-exhaustion-"));
  for (const [path, text] of Object.entries({ ...WORKSPACE_FILES, ...files })) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

async function run(source) {
  if (placement === "system prompt") {
    const workspace = await workspaceWith({});
    try {
      const template = SystemPromptTemplate.parse(source, loaderFor(workspace));
      return (await template.renderBody(context)).text;
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }
  if (placement === "included file") {
    const workspace = await workspaceWith({ ".podkit/prompts/evil.md": source });
    try {
      const template = SystemPromptTemplate.parse(
        'Intro {% include "$workspace/evil" %}',
        PromptLoader.create({ workspace }),
      );
      return (await template.renderBody(context)).text;
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }
  const pack = `[prompt]\ncontext_update_section = ${JSON.stringify(source)}\n`;
  const workspace = await workspaceWith({ ".podkit/prompts.toml": pack });
  try {
    const catalog = await PromptCatalog.load({
      userConfigDir: null,
      workspace,
      loader: loaderFor(workspace),
      onWarning: () => {},
    });
    return catalog.render("context_update_section", { sections: [] });
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

/** The template error at the end of the cause chain, and which kind it is. */
function describe(error) {
  let e = error;
  while (e && !TemplateRenderError.isInstance(e) && !TemplateSyntaxError.isInstance(e)) e = e.cause;
  return {
    pod: PodkitPodError.isInstance(error),
    kind: TemplateLimitError.isInstance(e)
      ? "limit"
      : TemplateSyntaxError.isInstance(e)
        ? "syntax"
        : e
          ? "render"
          : "other",
    template: e?.template,
    line: e?.line,
    message: String(error?.message ?? error).slice(0, 400),
  };
}

globalThis.gc();
const baseline = process.resourceUsage().maxRSS * 1024;
for (const entry of CORPUS) {
  if (only && entry.name !== only) continue;
  globalThis.gc();
  const start = performance.now();
  const startCpu = process.cpuUsage();
  let outcome;
  try {
    const text = await run(entry.source);
    outcome = { kind: "rendered", length: text.length };
  } catch (error) {
    outcome = describe(error);
  }
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(startCpu);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const peakExtraMb = (process.resourceUsage().maxRSS * 1024 - baseline) / 2 ** 20;
  console.log(JSON.stringify({ name: entry.name, expected: entry.kind, cpuMs, ms, peakExtraMb, ...outcome }));
}
