import { readdir, readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import type { LoadToolPackagesOptions } from "../../src/index.js";
import { MINIMAL, type PodTools, podTools, tempRoot } from "../helpers.js";

/**
 * These tests run real bubblewrap on Linux, and fail there without it (with the sandbox's own
 * error: "bubblewrap (bwrap) was not found on PATH"; CI installs it, .ci/run). Elsewhere the OS
 * backend is not bubblewrap, and they are skipped.
 */
export const LINUX = process.platform === "linux";

export const SECRET = "SECRET=hunter2-from-dotenv";

/** How a test pod is set up: its deny rules, network hosts, backend, extra scope lines. */
export interface SandboxPodSetup {
  /** `[[scope.deny]]` read rules, relative to the workspace. */
  deny?: string[];
  /** `[sandbox.network] allow`. */
  allow?: string[];
  backend?: "os" | "none";
  /** More manifest text (scope rules, `[[mcp.server]]`, …). */
  extra?: string;
  /** Write the workspace as read-only (`permission = "read"`) instead of writable. */
  readOnly?: boolean;
  /** Files written into the workspace before the pod starts (path relative to it → text). */
  files?: Record<string, string>;
  /** Options of `loadToolPackages` (`loaned`, …). */
  load?: Omit<LoadToolPackagesOptions, "warn">;
}

/**
 * A temp root with a workspace `ws/` (holding `.env` with `SECRET`), a sibling `ro/` the scope
 * lets the pod read (holding `ro/target`), and a sibling `outside/` the scope does not name; the
 * pod's tools loaded from a manifest allowing `ws` (write) with `setup`'s rules and bash on.
 */
export async function sandboxPod(setup: SandboxPodSetup = {}) {
  const t = await tempRoot();
  const ws = t.path("ws");
  await t.write("ws/.env", `${SECRET}\n`);
  await t.write("ro/target", "read-only original\n");
  await t.write("outside/kept", "outside original\n");
  for (const [path, text] of Object.entries(setup.files ?? {})) await t.write(`ws/${path}`, text);
  const lines = [
    MINIMAL,
    `[[scope.allow]]\ntarget = "."\npermission = "${setup.readOnly ? "read" : "write"}"\n`,
    `[[scope.allow]]\ntarget = "../ro"\npermission = "read"\n`,
    ...(setup.deny ?? []).map((target) => `[[scope.deny]]\ntarget = "${target}"\npermission = "read"\n`),
    "[tools]\nbash = true\n",
    `[sandbox]\nbackend = "${setup.backend ?? "os"}"\n`,
    ...(setup.allow === undefined ? [] : [`[sandbox.network]\nallow = ${JSON.stringify(setup.allow)}\n`]),
    setup.extra ?? "",
  ];
  const manifest = await t.write("ws/pod.toml", lines.join(""));
  const tools = await podTools(manifest, ws, setup.load);
  return { t, ws, root: t.root, tools };
}

/** Runs one bash command through the pod's tool server; its exit summary, output and `denied`. */
export async function bash(tools: PodTools, command: string, timeoutMs?: number) {
  const result = await tools.callUncapped("bash", {
    command,
    ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs }),
  });
  return {
    summary: result.summary,
    output: result.content ?? "",
    isError: result.is_error === true,
    denied: result.denied,
  };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A real HTTP server on 127.0.0.1 answering `hello from the host`, closed after the test. */
export async function localHttpServer(): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((_request, response) => {
    hits += 1;
    response.end("hello from the host\n");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, hits: () => hits };
}

/** Host pids whose command line is exactly `argv` (read from /proc; a zombie counts as gone). */
export async function processesRunning(argv: readonly string[]): Promise<number[]> {
  const wanted = `${argv.join("\0")}\0`;
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (cmdline === wanted && state !== "Z") found.push(Number(entry));
  }
  return found;
}

/**
 * A stdio MCP server with one tool, `read_text_file {path}`, that reads a file relative to its
 * working directory — newline-delimited JSON-RPC by hand, so it needs nothing but node.
 */
export const MCP_FS_SERVER = `
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) return;
  if (method === "initialize") {
    send({ id, result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "fs-fixture", version: "1" } } });
  } else if (method === "tools/list") {
    send({ id, result: { tools: [{ name: "read_text_file", description: "Read a text file", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }] } });
  } else if (method === "tools/call") {
    try {
      send({ id, result: { content: [{ type: "text", text: readFileSync(params.arguments.path, "utf8") }] } });
    } catch (error) {
      send({ id, result: { content: [{ type: "text", text: String(error.message) }], isError: true } });
    }
  } else {
    send({ id, result: {} });
  }
});
`;
