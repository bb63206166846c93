import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Item } from "@podkit/llm-worker";
import { type Entry, listSessionRows, readSessionView, type Store } from "@podkit/session-store";
import type { CapturedRequest } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import type { RunEvalOptions } from "../src/eval/eval-types.js";
import { runEval } from "../src/eval/run-eval.js";
import { MCP_TOOLS_DOMAIN } from "../src/pod/mcp-tools-record.js";
import { openWorkspaceFsStore } from "../src/pod/store-selection.js";
import type { PodWarning } from "../src/warnings.js";
import { type AgentScript, call, say, scriptedAgent } from "./eval-harness.js";
import { systemOf, usePodWorlds, type World } from "./pod-harness.js";

// Evals replay MCP tools and sub-pods from the recording (docs/evals.md): an MCP server the
// source session recorded is not started — its tools are the recorded definitions, so the request
// prefix stays the recording's — and a recorded `spawn_pod` answers with the recorded result
// without running the child.

const WRITER = fileURLToPath(new URL("../../tools/test/fixtures/mcp-writer-server.mjs", import.meta.url));
const MISSING_COMMAND = "/nonexistent/podkit-eval/mcp-writer";

const newWorld = usePodWorlds();
const stores: Store<Item>[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const MCP_SCRIPT: AgentScript = {
  "write the greeting": [
    call("mcp__writer__write", { path: "greeting.txt", text: "hello" }),
    say("I wrote greeting.txt."),
  ],
};

const SUBPOD_SCRIPT: AgentScript = {
  "have the helper review the readme": [
    call("spawn_pod", { role: "helper", task: "review the readme" }),
    say("The helper found the readme fine."),
  ],
  "review the readme": [say("The readme is fine.")],
};

const HELPER_ROLE = `
[[scope.allow]]
target = ".."
permission = "read"

[subpods.helper]
description = "reviews files, read-only"
[subpods.helper.worker]
system_prompt = "HELPER"
`;

function evalOptions(
  world: World,
  store: Store<Item>,
  sessionId: string,
  extra: Partial<RunEvalOptions> = {},
) {
  const { model: _model, ...podOptions } = world.options();
  return {
    cases: [{ sessionId }],
    store,
    variant: { manifest: world.loaded, model: world.double.baseUrl },
    podOptions,
    ...extra,
  } satisfies RunEvalOptions;
}

/** The part of a request every turn shares: system prompt, tool definitions, tool choice. */
const prefixOf = (request: CapturedRequest | undefined) =>
  JSON.stringify([request?.body.system, request?.body.tools, request?.body.tool_choice]);

async function entriesOf(store: Store<Item>, sessionId: string): Promise<Entry<Item>[]> {
  const view = await readSessionView(store, sessionId);
  const entries: Entry<Item>[] = [];
  for await (const entry of store.readAll({ sessionId, segmentId: view.head.segmentId })) entries.push(entry);
  return entries;
}

const toolResultsOf = (entries: readonly Entry<Item>[]) =>
  entries.flatMap((entry) => (entry.kind === "tool_result" ? [entry.item] : []));

describe("eval replay of MCP tools", () => {
  async function recordWithWriter({ defer = false, breakCommand = true } = {}) {
    const world = await newWorld({
      double: { respond: scriptedAgent(MCP_SCRIPT) },
      manifestExtra: [
        '[[scope.allow]]\ntarget = ".."\npermission = "write"',
        `[[mcp.server]]\nname = "writer"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(WRITER)}]${defer ? "\ndefer = true" : ""}`,
        // The fixture lives in this repository, outside the pod's scope: no OS sandbox here.
        '[sandbox]\nbackend = "none"',
      ].join("\n"),
    });
    const pod = await world.pod({ autoApprove: true });
    expect((await pod.run("write the greeting").result).status).toBe("finished");
    const greeting = join(world.workspace, "greeting.txt");
    // The server really ran in the recording.
    expect(await readFile(greeting, "utf8")).toBe("hello");
    await rm(greeting);
    const store = openWorkspaceFsStore(world.loaded.dataDir);
    stores.push(store);
    const recordedRequests = world.double.requests.length;
    if (!breakCommand)
      return { world, store, sessionId: pod.sessionId as string, greeting, recordedRequests };
    // The variant's manifest names a server command that does not exist.
    const manifestFile = join(world.workspace, ".podkit", "manifest.toml");
    const manifest = await readFile(manifestFile, "utf8");
    await writeFile(
      manifestFile,
      manifest.replace(JSON.stringify(process.execPath), JSON.stringify(MISSING_COMMAND)),
    );
    await world.reload();
    expect(world.loaded.manifest.mcp.server[0]?.command).toBe(MISSING_COMMAND);
    return { world, store, sessionId: pod.sessionId as string, greeting, recordedRequests };
  }

  it("records the tools each MCP server offered as an mcp.tools entry after segment_start", async () => {
    const { store, sessionId } = await recordWithWriter();
    const entries = await entriesOf(store, sessionId);
    const record = entries.find((e) => e.kind === "extension" && e.domain === MCP_TOOLS_DOMAIN);
    expect(entries.indexOf(record as Entry<Item>)).toBeLessThan(
      entries.findIndex((e) => e.kind === "invoke"),
    );
    if (record?.kind !== "extension") throw new Error("no mcp.tools entry");
    expect(record.payload).toMatchObject({
      servers: [
        {
          name: "writer",
          tools: [
            {
              name: "mcp__writer__note",
              description: "Writes a note, claiming it changes nothing.",
              read_only: true,
            },
            {
              name: "mcp__writer__write",
              description: "Writes text to a file.",
              input_schema: { type: "object" },
            },
          ],
        },
      ],
    });
  });

  it("replays an MCP server's calls from the recording without starting it: same tools offered, recorded results", async () => {
    const { world, store, sessionId, greeting, recordedRequests } = await recordWithWriter();
    const warnings: PodWarning[] = [];
    const options = evalOptions(world, store, sessionId);
    const report = await runEval({
      ...options,
      podOptions: { ...options.podOptions, onWarning: (warning) => warnings.push(warning) },
    });
    const [item] = report.items;
    expect(item).toMatchObject({ stop: "finished", divergences: [], difference: 0, pass: true });
    expect(item?.item.tools).toEqual(["mcp__writer__write"]);
    // The server was never started: no warning that it could not be, and it wrote nothing.
    expect(warnings.filter((w) => w.message.includes('MCP server "writer"'))).toEqual([]);
    expect(existsSync(greeting)).toBe(false);
    // The model was offered the recorded tools byte for byte, and got the recorded result.
    const requests = world.double.requests;
    expect(requests.length).toBe(recordedRequests * 2);
    for (let i = recordedRequests; i < requests.length; i++)
      expect(prefixOf(requests[i])).toBe(prefixOf(requests[0]));
    const [recorded] = toolResultsOf(await entriesOf(store, sessionId));
    const [replayed] = toolResultsOf(await entriesOf(store, item?.sessionId as string));
    expect(replayed).toMatchObject({ summary: (recorded as { summary: string }).summary });
    expect(JSON.stringify(replayed)).toContain("wrote greeting.txt");
  });

  it("a deferred server is recorded as deferred and started in the replay for its definitions; its calls are still replayed", async () => {
    const { world, store, sessionId, greeting, recordedRequests } = await recordWithWriter({
      defer: true,
      breakCommand: false,
    });
    const record = (await entriesOf(store, sessionId)).find(
      (e) => e.kind === "extension" && e.domain === MCP_TOOLS_DOMAIN,
    );
    if (record?.kind !== "extension") throw new Error("no mcp.tools entry");
    const tools = (record.payload as { servers: { tools: { deferred?: boolean }[] }[] }).servers[0]?.tools;
    expect(tools?.map((tool) => tool.deferred)).toEqual([true, true]);
    const report = await runEval(evalOptions(world, store, sessionId));
    expect(report.items[0]).toMatchObject({ stop: "finished", divergences: [], difference: 0, pass: true });
    // The server ran (for its definitions) but the call was answered from the recording.
    expect(existsSync(greeting)).toBe(false);
    const requests = world.double.requests;
    expect(requests.length).toBe(recordedRequests * 2);
    for (let i = recordedRequests; i < requests.length; i++)
      expect(prefixOf(requests[i])).toBe(prefixOf(requests[0]));
  });

  it("starts the server when one of its tools is live (positive control: the command is really missing)", async () => {
    const { world, store, sessionId } = await recordWithWriter();
    const warnings: PodWarning[] = [];
    const options = evalOptions(world, store, sessionId);
    const report = await runEval({
      ...options,
      tools: { mcp__writer__write: "live" },
      podOptions: { ...options.podOptions, onWarning: (warning) => warnings.push(warning) },
    });
    expect(warnings.map((w) => w.message)).toContainEqual(
      expect.stringContaining(`MCP server "writer" (${MISSING_COMMAND}) could not be connected`),
    );
    // Without the server its tools are not offered: the recorded call fails, and the prefix changed.
    const requests = world.double.requests;
    expect(prefixOf(requests.at(-1))).not.toBe(prefixOf(requests[0]));
    const [result] = toolResultsOf(await entriesOf(store, report.items[0]?.sessionId as string));
    expect(result).toMatchObject({ is_error: true, summary: expect.stringContaining("unknown tool") });
  });
});

describe("eval replay of sub-pods", () => {
  async function recordWithChild() {
    const world = await newWorld({
      double: { respond: scriptedAgent(SUBPOD_SCRIPT) },
      manifestExtra: HELPER_ROLE,
    });
    const pod = await world.pod({ autoApprove: true });
    expect((await pod.run("have the helper review the readme").result).status).toBe("finished");
    const store = openWorkspaceFsStore(world.loaded.dataDir);
    stores.push(store);
    const helperRequests = (requests: readonly CapturedRequest[]) =>
      requests.filter((request) => (systemOf(request) ?? "").startsWith("HELPER")).length;
    // The recording ran a child: it asked the model once.
    expect(helperRequests(world.double.requests)).toBe(1);
    return { world, store, sessionId: pod.sessionId as string, helperRequests };
  }

  it("answers a recorded spawn_pod with the recorded result: no child runs, no child session", async () => {
    const { world, store, sessionId, helperRequests } = await recordWithChild();
    const recordedRequests = world.double.requests.length;
    const sessionsBefore = (await listSessionRows(store)).length;
    const report = await runEval(evalOptions(world, store, sessionId));
    const [item] = report.items;
    expect(item).toMatchObject({ stop: "finished", divergences: [], difference: 0, pass: true });
    expect(item?.item.tools).toEqual(["spawn_pod"]);
    const replay = world.double.requests.slice(recordedRequests);
    expect(helperRequests(replay)).toBe(0);
    // One new session: the item; no child of it.
    expect((await listSessionRows(store)).length).toBe(sessionsBefore + 1);
    // The sub-pod tools were offered exactly as the recording's parent had them.
    const parentRequests = world.double.requests.filter((r) => !(systemOf(r) ?? "").startsWith("HELPER"));
    for (const request of replay) expect(prefixOf(request)).toBe(prefixOf(parentRequests[0]));
    const [recorded] = toolResultsOf(await entriesOf(store, sessionId));
    const [replayed] = toolResultsOf(await entriesOf(store, item?.sessionId as string));
    expect(replayed).toEqual({ ...recorded, call_id: expect.any(String) });
    expect(JSON.stringify(replayed)).toContain("The readme is fine.");
  });

  it("runs the child for real when spawn_pod is live", async () => {
    const { world, store, sessionId, helperRequests } = await recordWithChild();
    const recordedRequests = world.double.requests.length;
    const report = await runEval(evalOptions(world, store, sessionId, { tools: { spawn_pod: "live" } }));
    expect(report.items[0]?.stop).toBe("finished");
    expect(helperRequests(world.double.requests.slice(recordedRequests))).toBe(1);
  });
});
