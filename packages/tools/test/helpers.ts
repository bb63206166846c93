// biome-ignore-all lint/suspicious/noExplicitAny: tool results are read as loose JSON
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createModelAdapter, type Item, type ToolOutput, ToolServer, Worker } from "@podkit/llm-worker";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach } from "vitest";
import {
  type LoadToolPackagesOptions,
  loadToolPackages,
  type ToolSet,
  type ToolWarning,
} from "../src/index.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real temporary directory (canonical path), removed after the test. */
export async function tempRoot(): Promise<{
  root: string;
  write(rel: string, text: string): Promise<string>;
  path(rel: string): string;
}> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "podkit-tools-")));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  return {
    root,
    path: (rel) => join(root, rel),
    async write(rel, text) {
      const file = join(root, rel);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text);
      return file;
    },
  };
}

export const MINIMAL = `[pod]\nname = "tools-test"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n`;

/** A fresh temp root, its workspace `ws`, and the tools of a manifest allowing `permission` on all of it. */
export async function workspaceTools(permission: "read" | "write"): Promise<{
  t: Awaited<ReturnType<typeof tempRoot>>;
  ws: string;
  tools: PodTools;
}> {
  const t = await tempRoot();
  const ws = t.path("ws");
  const manifest = await t.write(
    "ws/pod.toml",
    `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "${permission}"\n`,
  );
  return { t, ws, tools: await podTools(manifest, ws) };
}

/** The tools of a pod whose manifest is `manifestFile`, on a flushed tool server. */
export interface PodTools {
  loaded: LoadedManifest;
  set: ToolSet;
  server: ToolServer;
  warnings: ToolWarning[];
  /** Runs one tool call through the tool server (argument validation, caps) as the worker would. */
  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutput>;
  /**
   * The same call before the output cap, as the worker hands it to the pod (`postToolCall`): with
   * `denied`, which the capped output the model reads leaves out. `callId` defaults to a fresh one.
   */
  callUncapped(name: string, args: Record<string, unknown>, callId?: string): Promise<ToolOutput>;
}

let callCount = 0;

export async function podTools(
  manifestFile: string,
  workspace: string,
  load: Omit<LoadToolPackagesOptions, "warn"> = {},
): Promise<PodTools> {
  const loaded = await loadManifest({
    file: manifestFile,
    env: { cwd: workspace, home: join(workspace, ".home"), env: {} },
  });
  const warnings: ToolWarning[] = [];
  const set = await loadToolPackages(loaded, { ...load, warn: (w) => warnings.push(w) });
  cleanups.push(() => set.close());
  const server = new ToolServer();
  set.register(server);
  await server.flushPending();
  return {
    loaded,
    set,
    server,
    warnings,
    call: (name, args, signal = new AbortController().signal) =>
      server.execute(
        { type: "tool_call", call_id: `call-${++callCount}`, name, arguments: JSON.stringify(args) },
        signal,
      ),
    callUncapped: (name, args, callId = `call-${++callCount}`) =>
      server.executeUncapped(
        { type: "tool_call", call_id: callId, name, arguments: JSON.stringify(args) },
        new AbortController().signal,
      ),
  };
}

/** A provider double (Anthropic wire), closed after the test. */
export async function startDouble(): Promise<ProviderDouble> {
  const double = await startProviderDouble({ wire: "anthropic" });
  cleanups.push(() => double.close());
  return double;
}

/**
 * Lets the model (the provider double, through the real Anthropic adapter and a real Worker)
 * call `calls` in one response, then finish; returns the tool results the worker persisted.
 */
export async function modelCalls(
  double: ProviderDouble,
  server: ToolServer,
  calls: { name: string; arguments: Record<string, unknown> }[],
): Promise<any[]> {
  double.enqueue(
    {
      parts: calls.map((call) => ({
        type: "tool_call" as const,
        name: call.name,
        arguments: call.arguments,
      })),
    },
    { parts: [{ type: "text", text: "done" }] },
  );
  const persisted: Item[] = [];
  const worker = new Worker({
    model: createModelAdapter("anthropic/claude-sonnet-4-5", { apiKey: "test-key", baseUrl: double.baseUrl }),
    systemPrompt: "You are a test pod.",
    tools: server,
    onHistoryAppend: (item) => {
      persisted.push(structuredClone(item));
    },
  });
  const result = await worker.run("go");
  if (result.status !== "finished") throw new Error(`run ended ${result.status}`);
  return persisted.filter((item) => item.type === "tool_result");
}
