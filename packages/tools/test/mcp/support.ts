import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as delay } from "node:timers/promises";
import { type ToolOutput, ToolServer } from "@podkit/llm-worker";
import { Scope } from "@podkit/manifest";
import { afterEach } from "vitest";
import { createSandbox, type DefinedToolPackage, type ToolWarning } from "../../src/index.js";

export const FIXTURE_SERVER = join(import.meta.dirname, "fixtures", "mcp-fixture-server.mjs");

/** A stdio `[[mcp.server]]` running the fixture server. */
export function stdioServer(name: string, extra: { args?: string[]; timeout_ms?: number } = {}) {
  return {
    name,
    command: process.execPath,
    args: [FIXTURE_SERVER, ...(extra.args ?? [])],
    ...(extra.timeout_ms === undefined ? {} : { timeout_ms: extra.timeout_ms }),
  };
}

/**
 * What a pod does with a tool package: builds its context (real temp workspace, warning sink,
 * abort signal, clean-up list), queues its factories on a real `ToolServer` and flushes it.
 * `close()` runs the clean-up callbacks in reverse, as the pod does when it closes.
 */
export interface LoadedPackage {
  workspace: string;
  server: ToolServer;
  names: readonly string[];
  warnings: ToolWarning[];
  call(name: string, args: unknown, signal?: AbortSignal): Promise<ToolOutput>;
  close(): Promise<void>;
  abortController: AbortController;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A package whose factories are queued and whose flush has started, but may not have finished. */
export interface LoadingPackage extends Omit<LoadedPackage, "names"> {
  flushing: Promise<readonly string[]>;
}

/** `env` is the pod's environment the package is given (`ctx.env`); default `process.env`. */
export async function startLoading(
  pkg: DefinedToolPackage,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<LoadingPackage> {
  const workspace = await mkdtemp(join(tmpdir(), "podkit-mcp-"));
  const warnings: ToolWarning[] = [];
  const closers: (() => void | Promise<void>)[] = [];
  const abortController = new AbortController();
  const scope = await Scope.fromRules([{ target: workspace, permission: "write" }], [], workspace);
  const warn = (warning: ToolWarning) => warnings.push(warning);
  // These tests are about MCP itself; the sandbox around a stdio server has its own (test/sandbox).
  const sandbox = createSandbox({
    config: { backend: "none", fail_if_unavailable: false, network: { allow: [] } },
    scope,
    workspace,
    env,
    warn,
  });
  const factories = await pkg.tools({
    scope,
    workspace,
    env,
    options: {},
    sandbox,
    warn,
    signal: abortController.signal,
    onClose: (callback) => closers.push(callback),
  });
  const server = new ToolServer();
  for (const factory of factories) server.registerTool(factory);
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      abortController.abort();
      for (const closer of closers.reverse()) await closer();
      await rm(workspace, { recursive: true, force: true });
    })();
    return closed;
  };
  cleanups.push(close);
  let n = 0;
  return {
    workspace,
    server,
    flushing: server.flushPending(),
    warnings,
    abortController,
    close,
    call: (name, args, signal = new AbortController().signal) =>
      server.execute(
        { type: "tool_call", call_id: `call_${++n}`, name, arguments: JSON.stringify(args) },
        signal,
      ),
  };
}

export async function loadPackage(
  pkg: DefinedToolPackage,
  env?: Readonly<Record<string, string | undefined>>,
): Promise<LoadedPackage> {
  const loading = await startLoading(pkg, env);
  const { flushing, ...rest } = loading;
  return { ...rest, names: await flushing };
}

/** The fixture's own pid (and its grandchild's, in `--grandchild` mode), asked through the tool. */
export async function fixturePids(
  loaded: LoadedPackage,
  server: string,
): Promise<{ pid: number; grandchild: number | null; cwd: string }> {
  const output = await loaded.call(`mcp__${server}__pid`, {});
  return JSON.parse(output.summary) as { pid: number; grandchild: number | null; cwd: string };
}

/** True while `pid` runs (a zombie counts as gone). */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

/** Polls until `predicate` holds or `timeoutMs` passes (generous: the machine may be busy); returns whether it held. */
export async function eventually(predicate: () => boolean, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await delay(20);
  }
  return true;
}

/** Repeats `attempt` until it returns true or `timeoutMs` passes (generous, as above); returns whether it did. */
export async function eventuallyAsync(attempt: () => Promise<boolean>, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await attempt())) {
    if (Date.now() > deadline) return false;
    await delay(50);
  }
  return true;
}

/** The fixture as a Streamable HTTP server on 127.0.0.1, in its own child process. */
export interface HttpFixture {
  url: string;
  child: ChildProcess;
  /** Lines the fixture printed on stdout (SESSION_OPENED / SESSION_CLOSED …). */
  lines: string[];
}

export async function startHttpFixture(env: Record<string, string> = {}): Promise<HttpFixture> {
  const child = spawn(process.execPath, [FIXTURE_SERVER, "--http"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  });
  const lines: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      lines.push(line);
      const match = /^LISTENING (\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`the HTTP fixture exited early (code ${code})`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child, lines };
}
