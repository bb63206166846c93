import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import { type Entry, FsStore, replay, sessionsRoot } from "@podkit/session-store";
import {
  type ProviderDouble,
  type ProviderDoubleOptions,
  type ScriptedResponse,
  startProviderDouble,
} from "@podkit/testkit";
import { definePodkitToolPackage, type PodkitToolPackage } from "@podkit/tools";
import { afterEach, expect } from "vitest";
import { assertSegmentSound } from "../../../test-support/log-soundness.js";
import type { PromptCatalog } from "../src/catalog/prompt-catalog.js";
import { Pod } from "../src/pod/pod.js";
import type { PodOptions } from "../src/pod/pod-options.js";
import { FIXED_CLOCK, useTempDirs, writeFiles } from "./helpers.js";

export const MODEL_REF = "anthropic/claude-sonnet-4-5";

/** The manifest's model for each of the double's wires. */
export const MODEL_REFS: Record<ProviderDoubleOptions["wire"], string> = {
  anthropic: MODEL_REF,
  "openai-responses": "openai/gpt-5",
  "openai-chat": "openai-chat/gpt-5",
  google: "google/gemini-2.5-flash",
};

/** Every entry of every segment of every session under `workspace` (or a sessions `root`), by segment. */
export async function readAllSegments(
  workspace: string,
  root = sessionsRoot(workspace),
): Promise<Map<string, Entry<Item>[]>> {
  const found = new Map<string, Entry<Item>[]>();
  if (!existsSync(root)) return found;
  const store = new FsStore<Item>({ root });
  try {
    for (const sessionId of await readdir(root)) {
      for (const file of await readdir(join(root, sessionId))) {
        if (!file.endsWith(".jsonl")) continue;
        const segmentId = file.slice(0, -".jsonl".length);
        const entries: Entry<Item>[] = [];
        for await (const entry of store.readAll({ sessionId, segmentId })) entries.push(entry);
        found.set(`${sessionId}/${segmentId}`, entries);
      }
    }
  } finally {
    await store.close();
  }
  return found;
}

/** The shared after-test check: each log replays, and every `invoke` is closed by a `run_*`. */
export async function assertLogsSound(workspace: string, root = sessionsRoot(workspace)): Promise<void> {
  for (const [segment, entries] of await readAllSegments(workspace, root)) {
    const leftOpen = assertSegmentSound(segment, entries, replay(entries));
    expect(leftOpen, `${segment}: invoke left open`).toBe(false);
    assertApprovalsSound(segment, entries);
  }
}

/**
 * The approvals layer's invariants: an answer follows its request, a call is answered at most
 * once, and a call that asked runs (has a successful result) only after an `allow` — except a
 * delegated request (a sub-pod call waiting on its child's approvals), which is never answered
 * itself and runs once the child's calls are.
 */
function assertApprovalsSound(segment: string, entries: readonly Entry<Item>[]): void {
  const requested = new Set<string>();
  const answers = new Map<string, string>();
  for (const entry of entries) {
    if (entry.kind === "approval_requested" && entry.child_session_id === undefined)
      requested.add(entry.call_id);
    if (entry.kind === "approval_answered") {
      expect(requested.has(entry.call_id), `${segment}: answer to ${entry.call_id} before its request`).toBe(
        true,
      );
      expect(answers.has(entry.call_id), `${segment}: ${entry.call_id} answered twice`).toBe(false);
      answers.set(entry.call_id, entry.decision);
    }
    if (
      entry.kind === "tool_result" &&
      entry.item.type === "tool_result" &&
      requested.has(entry.item.call_id)
    ) {
      const ran = entry.item.is_error !== true;
      if (ran)
        expect(answers.get(entry.item.call_id), `${segment}: ${entry.item.call_id} ran unapproved`).toBe(
          "allow",
        );
    }
  }
}

/** The log of the pod's single session head, as entries (kinds only by default). */
export async function sessionEntries(workspace: string): Promise<Entry<Item>[]> {
  const all = [...(await readAllSegments(workspace)).values()];
  expect(all).toHaveLength(1);
  return all[0] ?? [];
}

export const kinds = (entries: readonly Entry<Item>[]) => entries.map((entry) => entry.kind);

/** The entry kinds a user turn answered with text alone writes, in order. */
export const TEXT_TURN_KINDS = [
  "invoke",
  "user_input",
  "llm_usage",
  "assistant_item",
  "turn_end",
  "run_completed",
] as const;

/**
 * The entry kinds of a user turn answered with text alone that follows an interrupted one: the
 * `interrupt_system_note` is committed after its `invoke`, before the user's input.
 */
export const AFTER_INTERRUPT_TEXT_TURN_KINDS = [
  "invoke",
  "system_item",
  ...TEXT_TURN_KINDS.slice(1),
] as const;

/**
 * The log of a turn interrupted during a tool call followed by the next run: the open call is
 * closed with `interrupt_tool_result_summary`, then `interrupt_system_note` is committed, then the
 * new input — all before the model is asked; in their `_process_ended` variants when the process
 * running the turn ended (`crashed`). Returns the two prompt texts for further checks.
 */
export function expectInterruptedThenRecovered(
  entries: readonly Entry<Item>[],
  catalog: PromptCatalog,
  callId: string,
  crashed = false,
): { summary: string; note: string } {
  const summary = crashed
    ? catalog.render("interrupt_tool_result_summary_process_ended", {})
    : catalog.render("interrupt_tool_result_summary", {});
  const note = crashed
    ? catalog.render("interrupt_system_note_process_ended", { trigger: "user" })
    : catalog.render("interrupt_system_note", { trigger: "user" });
  expect(kinds(entries)).toEqual([
    "segment_start",
    "invoke",
    "user_input",
    "llm_usage",
    "assistant_item",
    "run_errored",
    "invoke",
    "tool_result",
    ...AFTER_INTERRUPT_TEXT_TURN_KINDS.slice(1),
  ]);
  expect(entries[7]).toMatchObject({ item: { call_id: callId, summary, is_error: true } });
  expect(entries[8]).toMatchObject({ item: { kind: "interrupt", body: note } });
  return { summary, note };
}

export interface World {
  root: string;
  workspace: string;
  home: string;
  loaded: LoadedManifest;
  double: ProviderDouble;
  /** Reloads the manifest (after files changed on disk). */
  reload(): Promise<LoadedManifest>;
  /** A pod on this world with the provider double, key, fixed clock and recorded warnings. */
  pod(options?: PodOptions): Promise<Pod>;
  restore(sessionId: string, options?: PodOptions): Promise<Pod>;
  options(extra?: PodOptions): PodOptions;
}

/**
 * Real temp workspaces, a provider double over HTTP, pods closed after each test, and
 * `assertLogsSound` run on every workspace a test used.
 */
export function usePodWorlds(): (setup?: WorldSetup) => Promise<World> {
  const tempDir = useTempDirs();
  const cleanups: (() => Promise<void>)[] = [];
  const workspaces: string[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    for (const workspace of workspaces.splice(0)) await assertLogsSound(workspace);
  });
  return async (setup = {}) => {
    const root = await tempDir("pod");
    const workspace = join(root, "project");
    const home = join(root, "home");
    const manifest = [
      `[pod]\nname = "test"`,
      `[model]\nref = "${MODEL_REFS[setup.double?.wire ?? "anthropic"]}"`,
      `[worker]\nsystem_prompt = ${JSON.stringify(setup.systemPrompt ?? "date={{ date }} cwd={{ cwd }}")}`,
      setup.manifestExtra ?? "",
    ].join("\n");
    await writeFiles(root, {
      "project/.podkit/manifest.toml": `${manifest}\n`,
      "project/README.md": "readme\n",
      ...Object.fromEntries(Object.entries(setup.files ?? {}).map(([k, v]) => [k, v])),
    });
    const env = { cwd: workspace, home, env: {} };
    const double = await startProviderDouble({ ...setup.double, wire: setup.double?.wire ?? "anthropic" });
    cleanups.push(() => double.close());
    workspaces.push(workspace);
    const world: World = {
      root,
      workspace,
      home,
      double,
      loaded: await loadManifest({ env }),
      reload: async () => {
        world.loaded = await loadManifest({ env });
        return world.loaded;
      },
      options: (extra = {}) => ({
        model: double.baseUrl,
        env: {
          ANTHROPIC_API_KEY: "test-key",
          OPENAI_API_KEY: "test-key",
          GOOGLE_GENERATIVE_AI_API_KEY: "test-key",
        },
        clock: FIXED_CLOCK,
        onWarning: () => {},
        toolPackages: setup.toolPackages ?? [],
        ...extra,
      }),
      pod: async (extra) => track(await Pod.fromManifest(world.loaded, world.options(extra))),
      restore: async (sessionId, extra) =>
        track(await Pod.restore(world.loaded, sessionId, world.options(extra))),
    };
    const track = (pod: Pod) => {
      cleanups.push(() => pod.close());
      return pod;
    };
    return world;
  };
}

export interface WorldSetup {
  systemPrompt?: string;
  manifestExtra?: string;
  /** Files relative to the temp root (`project/…` is the workspace, `home/…` the home). */
  files?: Record<string, string>;
  toolPackages?: PodkitToolPackage[];
  /** Provider double options (`measureInputTokens`, `respond`; `wire`, default Anthropic's). */
  double?: Partial<ProviderDoubleOptions>;
}

/** A tool package of simple test tools; `calls` records every execution. */
export function testTools(
  tools: Record<string, (args: Record<string, unknown>, signal: AbortSignal) => Promise<string> | string>,
  calls: string[] = [],
): PodkitToolPackage {
  return definePodkitToolPackage({
    name: "pod-test-tools",
    tools: () =>
      Object.entries(tools).map(([name, run]) => () => ({
        name,
        description: `test tool ${name}`,
        inputSchema: { type: "object", properties: {}, additionalProperties: true },
        async execute(args: Record<string, unknown>, { signal }: { signal: AbortSignal }) {
          calls.push(name);
          return { summary: await run(args, signal) };
        },
      })),
  });
}

export const text = (value: string): ScriptedResponse => ({ parts: [{ type: "text", text: value }] });

export const toolCall = (
  name: string,
  args: Record<string, unknown> = {},
  id?: string,
): ScriptedResponse => ({
  parts: [{ type: "tool_call", name, arguments: args, ...(id === undefined ? {} : { id }) }],
});

/** The system prompt a captured Anthropic request carried. */
// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request body.
export const systemOf = (request: { body: any }): string => request.body.system?.[0]?.text;

/**
 * A tool that signals when it starts and finishes only when released (or when its call is
 * aborted): `running` resolves at its start, `release()` lets it finish with "slow done".
 */
export function gate() {
  let started!: () => void;
  let release!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const run = async (_args: Record<string, unknown>, signal: AbortSignal) => {
    started();
    await Promise.race([released, new Promise((resolve) => signal.addEventListener("abort", resolve))]);
    return "slow done";
  };
  return { running, release, run };
}
