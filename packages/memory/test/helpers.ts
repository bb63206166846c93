import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createModelAdapter } from "@podkit/llm-worker";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import { loadPodResources, type PromptCatalog } from "@podkit/pod";
import { type ProviderDouble, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import { afterEach } from "vitest";
import type { MemoryJobOptions } from "../src/worker/memory-model.js";

/** The fixed clock of these tests. */
export const NOW = new Date("2026-04-15T09:30:00Z");
export const clock = () => NOW;
export const MODEL_REF = "anthropic/claude-sonnet-4-5";

/** Real temp directories, removed after each test. */
export function useTempDirs(): (label?: string) => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (label = "t") => {
    const dir = await mkdtemp(join(tmpdir(), `podkit-memory-${label}-`));
    made.push(dir);
    return dir;
  };
}

export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/** A model response calling one tool. */
export const callTool = (name: string, args: Record<string, unknown>): ScriptedResponse => ({
  parts: [{ type: "tool_call", name, arguments: args }],
  finishReason: "tool_calls",
});

/** A final text response. */
export const say = (text: string): ScriptedResponse => ({
  parts: [{ type: "text", text }],
  finishReason: "stop",
});

/** A record file's text from frontmatter lines and a body. */
export function record(frontmatter: string, body = "Body."): string {
  return `---\n${frontmatter.trim()}\n---\n\n${body}\n`;
}

export const decision = (extra = "status: open", body = "We decided this.") =>
  record(
    `created_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-01T10:00:00Z\n${extra}\nsources: [{segment_id: seg-0, range: [1, 2]}]`,
    body,
  );

/** Files of a staging directory, parsed. */
export async function stagingFiles(workspace: string): Promise<Record<string, unknown>[]> {
  const dir = join(workspace, ".podkit/memory/_staging");
  const names = (await readdir(dir).catch(() => [] as string[]))
    .filter((n) => n.endsWith(".json") && !n.startsWith("."))
    .sort();
  return Promise.all(
    names.map(async (n) => JSON.parse(await readFile(join(dir, n), "utf8")) as Record<string, unknown>),
  );
}

export interface MemoryWorld {
  root: string;
  workspace: string;
  home: string;
  loaded: LoadedManifest;
  catalog: PromptCatalog;
  double: ProviderDouble;
  /** The job options of extract/consolidation against the double (real adapter, real HTTP). */
  job(extra?: Partial<MemoryJobOptions>): MemoryJobOptions;
}

/**
 * A temp workspace with a manifest (`[memory]` on), the real layered prompt catalog, and the
 * Anthropic provider double; everything closed after the test.
 */
export function useMemoryWorlds(): (setup?: {
  manifestExtra?: string;
  files?: Record<string, string>;
}) => Promise<MemoryWorld> {
  const tempDir = useTempDirs();
  const doubles: ProviderDouble[] = [];
  afterEach(async () => {
    for (const d of doubles.splice(0)) await d.close();
  });
  return async (setup = {}) => {
    const root = await tempDir("world");
    const workspace = join(root, "project");
    const home = join(root, "home");
    const manifest = [
      `[pod]\nname = "memory-test"`,
      `[model]\nref = "${MODEL_REF}"`,
      `[worker]\nlanguage = "English"`,
      setup.manifestExtra ?? "[memory]",
    ].join("\n");
    await writeFiles(root, { "project/.podkit/manifest.toml": `${manifest}\n`, ...(setup.files ?? {}) });
    const loaded = await loadManifest({ env: { cwd: workspace, home, env: {} } });
    const { catalog } = await loadPodResources(loaded, { onWarning: () => {} });
    const double = await startProviderDouble({ wire: "anthropic" });
    doubles.push(double);
    const model = createModelAdapter(MODEL_REF, { baseUrl: double.baseUrl, apiKey: "test-key" });
    return {
      root,
      workspace,
      home,
      loaded,
      catalog,
      double,
      job: (extra = {}) => ({
        workspace,
        model,
        prompts: catalog,
        language: "English",
        clock,
        retry: { maxAttempts: 1 },
        ...extra,
      }),
    };
  };
}
