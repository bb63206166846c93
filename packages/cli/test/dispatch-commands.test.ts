import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { runBin } from "./run-bin.js";
import {
  dispatchWorkspace,
  startWorker,
  URL_VARIABLE,
  type WorkerProcess,
} from "./support/dispatch-world.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit submit`, `podkit worker` and `podkit runs …` end to end: real child processes, the
// provider double, a real PostgreSQL server (issue 27).

const database = usePostgresDatabases();

let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
let env: Record<string, string>;
const workers: WorkerProcess[] = [];
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  ws = await dispatchWorkspace(double.baseUrl);
  env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", [URL_VARIABLE]: await database() };
});
afterEach(async () => {
  for (const worker of workers.splice(0)) {
    worker.child.kill("SIGKILL");
    await worker.exited;
  }
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

const podkit = (args: string[]) => runBin(args, { cwd: ws.workspace, env, timeoutMs: 60_000 });
const count = (delayMs = 0): ScriptedResponse => ({
  parts: [{ type: "tool_call", name: "count", arguments: { delay_ms: delayMs } }],
});
const text = (value: string): ScriptedResponse => ({ parts: [{ type: "text", text: value }] });

function worker(args: string[] = []): WorkerProcess {
  const started = startWorker(ws.workspace, env, args);
  workers.push(started);
  return started;
}

async function showJson(runId: string): Promise<Record<string, unknown>> {
  const shown = await podkit(["runs", "show", runId, "--json"]);
  expect(shown.code, shown.stderr).toBe(0);
  return JSON.parse(shown.stdout) as Record<string, unknown>;
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const counted = async () =>
  (await readFile(join(ws.workspace, "counter.txt"), "utf8").catch(() => "")).trim();

// Each command is a process of its own that opens the queue: generous bounds for a loaded machine.
// bash runs in the OS sandbox (docs/sandbox.md): it writes ran.txt because the scope lets it.
const BASH_SCOPE = '\n[[scope.allow]]\ntarget = ".."\npermission = "write"\n';

describe("podkit submit, worker and runs", { timeout: 120_000 }, () => {
  it("queues a run, a worker runs it, runs list and show report it with its entries in the session log", async () => {
    double.enqueue(count(), text("counted once"));
    const submitted = await podkit(["submit", "count once please"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const runId = submitted.stdout.trim();
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    worker();
    const run = await until(async () => {
      const shown = await showJson(runId);
      return shown.state === "completed" ? shown : undefined;
    });
    expect(run).toMatchObject({ attempts: 1, result: "finished", pod: "tester" });
    const log = run.log as string[];
    expect(log[0]).toContain('submitted: "count once please"');
    expect(log[1]).toMatch(/attempt 1 started on .+:\d+/);
    expect(log[2]).toContain("ended completed (finished)");
    expect((await counted()).split("\n")).toHaveLength(1);

    const listed = await podkit(["runs", "list", "--json"]);
    expect((JSON.parse(listed.stdout) as { runId: string }[]).map((r) => r.runId)).toEqual([runId]);
    expect((await podkit(["runs", "list", "--state", "dead"])).stdout).toContain("no runs");
    const session = await podkit(["session", "show", run.sessionId as string]);
    expect(session.code, session.stderr).toBe(0);
    expect(session.stdout).toContain("count once please");

    const keyed = await podkit(["submit", "once", "--key", "ticket-7", "--json"]);
    const again = await podkit(["submit", "once", "--key", "ticket-7", "--json"]);
    expect(JSON.parse(keyed.stdout)).toMatchObject({ created: true });
    expect(JSON.parse(again.stdout)).toMatchObject({
      created: false,
      run_id: JSON.parse(keyed.stdout).run_id,
    });
  });

  it("a run stops awaiting approval and frees its worker; podkit approve queues it again and it runs the call once", async () => {
    const manifest = join(ws.workspace, ".podkit", "manifest.toml");
    await writeFile(
      manifest,
      (await readFile(manifest, "utf8")).replace("builtin = []", "builtin = []\nbash = true") + BASH_SCOPE,
    );
    double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_w", name: "bash", arguments: { command: "echo ran >> ran.txt" } },
        ],
      },
      text("ran it"),
    );
    const runId = (await podkit(["submit", "run the script"])).stdout.trim();
    worker();
    const waiting = await until(async () => {
      const shown = await showJson(runId);
      return shown.state === "awaiting_approval" ? shown : undefined;
    });
    const sessionId = waiting.sessionId as string;
    const ran = async () => (await readFile(join(ws.workspace, "ran.txt"), "utf8").catch(() => "")).trim();
    expect(await ran()).toBe("");
    expect((await podkit(["approvals"])).stdout).toContain("toolu_w");

    const approved = await podkit(["approve", sessionId, "toolu_w", "--allow", "--by", "alice"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain(`dispatched run ${runId} is queued again`);
    const done = await until(async () => {
      const shown = await showJson(runId);
      return shown.state === "completed" ? shown : undefined;
    });
    expect(done).toMatchObject({ result: "finished" });
    expect(await ran()).toBe("ran");
    const session = await podkit(["session", "show", sessionId]);
    expect(session.stdout).toContain("alice");
  });

  it("runs cancel of a run awaiting approval cancels it: an answer requeues nothing, and resume may continue the session", async () => {
    const manifest = join(ws.workspace, ".podkit", "manifest.toml");
    await writeFile(
      manifest,
      (await readFile(manifest, "utf8")).replace("builtin = []", "builtin = []\nbash = true") + BASH_SCOPE,
    );
    double.enqueue({
      parts: [
        { type: "tool_call", id: "toolu_c", name: "bash", arguments: { command: "echo ran >> ran.txt" } },
      ],
    });
    const runId = (await podkit(["submit", "run the script"])).stdout.trim();
    worker();
    const waiting = await until(async () => {
      const shown = await showJson(runId);
      return shown.state === "awaiting_approval" ? shown : undefined;
    });
    const sessionId = waiting.sessionId as string;
    // Positive control: while the dispatcher holds the run, resume is refused.
    const refused = await podkit(["resume", sessionId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is dispatched run ${runId}, waiting for approvals`);

    const cancelled = await podkit(["runs", "cancel", runId]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toContain("cancelled");
    expect((await showJson(runId)).state).toBe("cancelled");
    const approved = await podkit(["approve", sessionId, "toolu_c", "--allow"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).not.toContain("queued again");
    expect((await showJson(runId)).state).toBe("cancelled");

    // The session is the person's again: resume runs the answered call here, once.
    double.enqueue(text("ran it here"));
    const resumed = await podkit(["resume", sessionId]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((await readFile(join(ws.workspace, "ran.txt"), "utf8")).trim()).toBe("ran");
  });

  it("runs cancel interrupts the run on the worker that holds it", async () => {
    double.enqueue(count(60_000));
    const runId = (await podkit(["submit", "count slowly"])).stdout.trim();
    const w = worker();
    await until(async () => ((await counted()) === "" ? undefined : true));
    const cancelled = await podkit(["runs", "cancel", runId]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toContain("cancelled");
    // The holder stopped it (its tool waits 60 s, so nothing else ended it); how soon is a bound
    // the docs state and the dispatch conformance suite checks on each engine.
    const ended = await until(() =>
      w.events.find((e) => e.event.type === "ended" && e.event.runId === runId),
    );
    expect(ended.event.state).toBe("cancelled");
    const run = await showJson(runId);
    expect(run.state).toBe("cancelled");
    expect((run.log as string[]).at(-1)).toContain("ended cancelled");
  });

  it("Ctrl-C drains: the run in progress finishes, nothing new is claimed, the worker exits 0", async () => {
    double.enqueue(count(3_000), text("done"));
    const first = (await podkit(["submit", "first"])).stdout.trim();
    const second = (await podkit(["submit", "second"])).stdout.trim();
    const w = worker();
    const claimed = await until(() => w.events.find((e) => e.event.type === "claimed"));
    expect(claimed.event.runId).toBe(first);
    w.child.kill("SIGINT");
    expect(await w.exited).toBe(0);
    expect(w.stderr.join("")).toContain("draining");
    expect((await showJson(first)).state).toBe("completed");
    expect((await showJson(second)).state).toBe("queued");
  });

  it("says what to set when the pod's sessions are on the filesystem, and names an unknown run", async () => {
    const fsWorkspace = await doubleWorkspace(double.baseUrl);
    try {
      const refused = await runBin(["submit", "hi"], { cwd: fsWorkspace.workspace, env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /^error: dispatched runs need sessions every machine can open.*\nhint: set \[session\] store = "postgres"/,
      );
      expect(refused.stderr).not.toContain("    at ");
    } finally {
      await rm(fsWorkspace.root, { recursive: true, force: true });
    }
    const unknown = await podkit(["runs", "show", "0190e2c1-aaaa-7bbb-8ccc-000000000001"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /^error: no run 0190e2c1-aaaa-7bbb-8ccc-000000000001\nhint: `podkit runs list`/,
    );
    const usage = await podkit(["submit", "--continue"]);
    expect(usage.code).toBe(2);
  });
});
