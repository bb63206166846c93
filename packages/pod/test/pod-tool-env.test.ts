import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { PodWarning } from "../src/warnings.js";
import { sessionEntries, text, usePodWorlds } from "./pod-harness.js";

// PodOptions.env is the environment of the pod's tools: bash's child, MCP `headers_env` and a
// stdio MCP server read it, not process.env. A real pod on the provider double, a real bash
// child, and the tools package's MCP fixture server over HTTP and over stdio.

const FIXTURE = fileURLToPath(
  new URL("../../tools/test/mcp/fixtures/mcp-fixture-server.mjs", import.meta.url),
);
const TOKEN = "pod-env-token";

const world = usePodWorlds();
const children: ChildProcess[] = [];
const savedEnv = { ...process.env };

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
});

/** The fixture MCP server over HTTP, refusing any request without `Authorization: Bearer TOKEN`. */
async function startHttpServer(): Promise<string> {
  const child = spawn(process.execPath, [FIXTURE, "--http"], {
    env: { ...process.env, FIXTURE_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const port = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      const match = /^LISTENING (\d+)$/.exec(line);
      if (match) resolve(match[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`the MCP fixture exited early (code ${code})`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

/**
 * A pod with bash and three MCP servers: `pod` takes its header from POD_MCP_AUTH, `proc` from
 * PROCESS_MCP_AUTH, `io` runs over stdio. The model calls bash, `pod`'s echo and `io`'s env tool.
 */
async function runTools(env: Record<string, string> | undefined) {
  const url = await startHttpServer();
  const w = await world({
    manifestExtra: [
      "[tools]\nbash = true",
      `[[mcp.server]]\nname = "pod"\nurl = "${url}"\nheaders_env = { Authorization = "POD_MCP_AUTH" }`,
      `[[mcp.server]]\nname = "proc"\nurl = "${url}"\nheaders_env = { Authorization = "PROCESS_MCP_AUTH" }`,
      `[[mcp.server]]\nname = "io"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(FIXTURE)}]`,
      // The environment's path without the OS sandbox, which would hide the fixture (it lives in
      // this repository, outside the pod's scope); packages/tools/test/sandbox covers that path.
      '[sandbox]\nbackend = "none"',
    ].join("\n"),
  });
  const warnings: PodWarning[] = [];
  // The builtin policy asks about bash; this test is about the environment, so it runs unasked.
  const pod = await w.pod({ env, autoApprove: true, onWarning: (warning) => warnings.push(warning) });
  w.double.enqueue(
    {
      parts: [
        {
          type: "tool_call",
          name: "bash",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not a template
          arguments: { command: 'echo "pod=${ONLY_IN_POD:-absent} process=${ONLY_IN_PROCESS:-absent}"' },
        },
        { type: "tool_call", name: "mcp__pod__echo", arguments: { text: "through the header" } },
        { type: "tool_call", name: "mcp__io__env", arguments: { names: ["HOME", "ONLY_IN_PROCESS"] } },
      ],
    },
    text("done"),
  );
  await pod.run("go");
  const entries = await sessionEntries(w.workspace);
  const results = entries.flatMap((entry) =>
    entry.kind === "tool_result" ? [entry.item as { summary: string; content?: string }] : [],
  );
  const offered = (
    (w.double.requests[0]?.body as { tools?: { name: string }[] } | undefined)?.tools ?? []
  ).map((t) => t.name);
  return { results, offered, warnings };
}

describe("PodOptions.env reaches the tools", () => {
  it("bash, MCP headers_env and a stdio MCP server read the pod's environment, not process.env", async () => {
    process.env.ONLY_IN_PROCESS = "process-value";
    process.env.PROCESS_MCP_AUTH = `Bearer ${TOKEN}`;
    const { results, offered, warnings } = await runTools({
      ANTHROPIC_API_KEY: "test-key",
      ONLY_IN_POD: "pod-value",
      POD_MCP_AUTH: `Bearer ${TOKEN}`,
      HOME: "/home/of-the-pod",
    });

    expect(results.map((r) => r.content ?? r.summary)).toEqual([
      "pod=pod-value process=absent\n",
      "echo: through the header",
      JSON.stringify({ HOME: "/home/of-the-pod", ONLY_IN_PROCESS: null }),
    ]);
    // The header whose variable only process.env holds was not sent: that server is left out.
    expect(offered).toContain("mcp__pod__echo");
    expect(offered).not.toContain("mcp__proc__echo");
    expect(warnings.map((w) => w.message).join("\n")).toMatch(
      /the environment variable PROCESS_MCP_AUTH, which is not set/,
    );
  });

  it("positive control: without PodOptions.env the same variables come from process.env", async () => {
    Object.assign(process.env, {
      ANTHROPIC_API_KEY: "test-key",
      ONLY_IN_PROCESS: "process-value",
      PROCESS_MCP_AUTH: `Bearer ${TOKEN}`,
      POD_MCP_AUTH: `Bearer ${TOKEN}`,
    });
    const { results, offered } = await runTools(undefined);

    expect(results[0]?.content).toBe("pod=absent process=process-value\n");
    expect(JSON.parse(results[2]?.summary ?? "")).toMatchObject({
      ONLY_IN_PROCESS: null,
      HOME: process.env.HOME ?? null,
    });
    expect(offered).toContain("mcp__proc__echo");
  });
});
