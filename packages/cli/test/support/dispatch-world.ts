import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach } from "vitest";
import { BIN, REPO_ROOT, runBin } from "../run-bin.js";

/**
 * A tool package for dispatch tests: `count` appends its call id (and the worker's pid) to
 * `counter.txt` in the workspace, then waits `delay_ms` — a side effect counted per call, with a
 * window for a SIGKILL to land in.
 */
const COUNTER_TOOLS = `import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { definePodkitToolPackage } from "@podkit/tools";
export default definePodkitToolPackage({
  name: "counter-tools",
  tools: (ctx) => [
    () => ({
      name: "count",
      description: "counts one side effect",
      inputSchema: { type: "object", properties: { delay_ms: { type: "integer" } }, additionalProperties: true },
      async execute(args, { callId, signal }) {
        await appendFile(join(ctx.workspace, "counter.txt"), callId + " " + process.pid + "\\n");
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, args.delay_ms ?? 0);
          signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
        });
        return { summary: "counted" };
      },
    }),
  ],
});
`;

export const URL_VARIABLE = "PODKIT_TEST_DISPATCH_URL";

/** A workspace whose pod stores sessions in PostgreSQL and has the counter tool package. */
export async function dispatchWorkspace(
  baseUrl: string,
  extra = "",
): Promise<{ root: string; workspace: string; home: string }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "podkit-dispatch-")));
  const workspace = join(root, "ws");
  const home = join(root, "home");
  await mkdir(join(workspace, ".podkit"), { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(
    join(workspace, ".podkit", "manifest.toml"),
    [
      '[pod]\nname = "tester"',
      `[model]\nref = "anthropic/claude-sonnet-4-5"\nbase_url = "${baseUrl}"`,
      '[worker]\nsystem_prompt = "You count. Tools: {{ tools | join(\\",\\") }}"',
      '[tools]\nbuiltin = []\npackages = ["../counter-tools.mjs"]',
      `[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"`,
      extra,
    ].join("\n"),
  );
  await writeFile(join(workspace, "counter-tools.mjs"), COUNTER_TOOLS);
  // The package imports @podkit/tools: resolve it from the repository, as an installed package would be.
  await mkdir(join(workspace, "node_modules", "@podkit"), { recursive: true });
  await symlink(join(REPO_ROOT, "packages", "tools"), join(workspace, "node_modules", "@podkit", "tools"));
  return { root, workspace, home };
}

/** A running `podkit worker`: its JSON events, each with the time the worker gave it. */
export interface WorkerProcess {
  child: ChildProcess;
  events: { at: number; event: Record<string, unknown> }[];
  stderr: string[];
  /** Resolves once it printed its "serving" line. */
  ready: Promise<void>;
  exited: Promise<number | null>;
}

/** Starts `podkit worker --json ...args` in `cwd`. */
export function startWorker(cwd: string, env: Record<string, string>, args: string[] = []): WorkerProcess {
  const child = spawn(process.execPath, [BIN, "worker", "--json", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const events: WorkerProcess["events"] = [];
  const stderr: string[] = [];
  let buffered = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      // The worker's own time for the event: read time can trail it when this process is busy (a
      // `claimed` read after the test paused that worker would seem to start after the pause).
      const event = JSON.parse(line) as Record<string, unknown>;
      events.push({ at: typeof event.at === "string" ? Date.parse(event.at) : Date.now(), event });
    }
  });
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    stderr.push(text);
    if (text.includes("podkit worker: serving")) onReady();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, events, stderr, ready, exited };
}

/** One test's dispatch world: the provider double, a workspace on a fresh database, its workers. */
export interface DispatchWorld {
  double: ProviderDouble;
  ws: { root: string; workspace: string; home: string };
  env: Record<string, string>;
  /** `podkit <args>` in the workspace, with the world's environment. */
  podkit(args: string[]): ReturnType<typeof runBin>;
  /** Starts a `podkit worker` killed with the world. */
  worker(args?: string[]): WorkerProcess;
  /** Polls `check` (every 100 ms) until it gives a value; fails after `ms` (a loaded machine is slow, not wrong). */
  until<T>(check: () => Promise<T | undefined> | T | undefined, ms?: number): Promise<T>;
  /** `podkit runs show <run> --json`, polled until its state is `state`. */
  runIn(runId: string, state: string): Promise<Record<string, unknown>>;
}

/**
 * A dispatch world per test: `database` gives a fresh PostgreSQL database, `prepare` edits the
 * manifest before anything runs. Workers are killed and the double closed after each test.
 */
export function useDispatchWorlds(
  database: () => Promise<string>,
  options: { extra?: string; prepare?: (manifest: string) => string } = {},
): () => DispatchWorld {
  let world: DispatchWorld | undefined;
  const workers: WorkerProcess[] = [];
  beforeEach(async () => {
    const double = await startProviderDouble({ wire: "anthropic" });
    const ws = await dispatchWorkspace(double.baseUrl, options.extra);
    if (options.prepare !== undefined) {
      const manifest = join(ws.workspace, ".podkit", "manifest.toml");
      await writeFile(manifest, options.prepare(await readFile(manifest, "utf8")));
    }
    const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", [URL_VARIABLE]: await database() };
    const podkit = (args: string[]) => runBin(args, { cwd: ws.workspace, env, timeoutMs: 60_000 });
    const until = async <T>(
      check: () => Promise<T | undefined> | T | undefined,
      ms = 180_000,
    ): Promise<T> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const value = await check();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    world = {
      double,
      ws,
      env,
      podkit,
      worker: (args = []) => {
        const started = startWorker(ws.workspace, env, args);
        workers.push(started);
        return started;
      },
      until,
      runIn: (runId, state) =>
        until(async () => {
          const run = JSON.parse((await podkit(["runs", "show", runId, "--json"])).stdout) as Record<
            string,
            unknown
          >;
          return run.state === state ? run : undefined;
        }),
    };
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      worker.child.kill("SIGKILL");
      await worker.exited;
    }
    await world?.double.close();
    if (world !== undefined) await rm(world.ws.root, { recursive: true, force: true });
    world = undefined;
  });
  return () => {
    if (world === undefined) throw new Error("the dispatch world exists inside a test only");
    return world;
  };
}
