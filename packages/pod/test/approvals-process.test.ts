// biome-ignore-all lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request bodies.
import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Item } from "@podkit/llm-worker";
import type { Entry, Store } from "@podkit/session-store";
import { describe, expect, it, vi } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { openSessionStore } from "../src/pod/store-selection.js";
import { text, usePodWorlds, type World } from "./pod-harness.js";
import { installStorePackage } from "./store-workspace.js";

// Issue 25, end to end across processes (they import the built dist: run `pnpm build` first):
// process A runs a pod until its run ends awaiting approval and is SIGKILLed; process B answers;
// process C resumes. The `side` tool counts its runs in a file, the provider double (here) sees
// what the model saw. Every case runs on the filesystem store and on PostgreSQL.
const CHILD = fileURLToPath(new URL("./crash/approval-child.mjs", import.meta.url));
const URL_VARIABLE = "POD_TEST_DATABASE_URL";
// Each case is several real processes one after another (slow on a loaded machine).
vi.setConfig({ testTimeout: 180_000 });
const database = usePostgresDatabases();
const world = usePodWorlds();

interface Backend {
  name: string;
  setup(): Promise<{
    manifestExtra: string;
    env: Record<string, string>;
    install?: (dir: string) => Promise<void>;
  }>;
}

const BACKENDS: Backend[] = [
  { name: "filesystem", setup: async () => ({ manifestExtra: "", env: {} }) },
  {
    name: "PostgreSQL",
    setup: async () => ({
      manifestExtra: `[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n`,
      env: { [URL_VARIABLE]: await database() },
      install: installStorePackage,
    }),
  },
];

interface Child {
  process: ChildProcess;
  /** Resolves with the first stdout line starting with one of `prefixes` (rejects on exit without one). */
  line(...prefixes: string[]): Promise<string>;
  exited: Promise<void>;
}

interface Setup {
  w: World;
  env: Record<string, string>;
  spawn(mode: string, ...args: string[]): Child;
}

async function setUp(backend: Backend): Promise<Setup> {
  const store = await backend.setup();
  const w = await world({ manifestExtra: store.manifestExtra });
  await store.install?.(w.workspace);
  const spawnChild = (mode: string, ...args: string[]): Child => {
    const child = spawn(
      process.execPath,
      [CHILD, mode, w.workspace, w.home, w.double.baseUrl, w.root, ...args],
      {
        stdio: ["pipe", "pipe", "pipe"],
        env: { ...process.env, ...store.env },
      },
    );
    let stdout = "";
    let stderr = "";
    const waiters: { prefixes: string[]; resolve: (line: string) => void; reject: (e: Error) => void }[] = [];
    const check = () => {
      for (const waiter of [...waiters]) {
        const found = stdout.split("\n").find((l) => waiter.prefixes.some((p) => l.startsWith(p)));
        if (found !== undefined) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(found);
        }
      }
    };
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      check();
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
    exited.then(() => {
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`child ${mode} exited without "${waiter.prefixes}": ${stdout}\n${stderr}`));
      }
    });
    return {
      process: child,
      exited,
      line: (...prefixes) =>
        new Promise((resolve, reject) => {
          waiters.push({ prefixes, resolve, reject });
          check();
        }),
    };
  };
  return { w, env: store.env, spawn: spawnChild };
}

/** The model asks for `n` parallel `side` calls (ids toolu_0…), then (later) answers. */
function sideBatch(n: number) {
  return {
    parts: Array.from({ length: n }, (_, i) => ({
      type: "tool_call" as const,
      id: `toolu_${i}`,
      name: "side",
      arguments: { n: i },
    })),
  };
}

/** Process A: runs until the run ends awaiting approval, then is SIGKILLed. Returns the session id. */
async function runUntilAwaiting(s: Setup, calls: number): Promise<string> {
  s.w.double.enqueue(sideBatch(calls));
  const a = s.spawn("run");
  expect(await a.line("RESULT")).toBe("RESULT awaiting_approval");
  const pending = await a.line("PENDING");
  expect(pending).toBe(`PENDING ${Array.from({ length: calls }, (_, i) => `toolu_${i}`).join(",")}`);
  const sessionId = (await a.line("SESSION")).split(" ")[1] as string;
  a.process.kill("SIGKILL");
  await a.exited;
  return sessionId;
}

async function answer(s: Setup, sessionId: string, callId: string, decision: string, by: string) {
  const b = s.spawn("answer", sessionId, callId, decision, by);
  const line = await b.line("ANSWERED", "ERROR");
  await b.exited;
  return line;
}

async function sideEffects(s: Setup): Promise<string[]> {
  return (await readFile(join(s.w.root, "side-effects"), "utf8").catch(() => "")).split("\n").filter(Boolean);
}

async function entriesOf(s: Setup, sessionId: string): Promise<Entry<Item>[]> {
  const store: Store<Item> = await openSessionStore(s.w.loaded, { env: s.env });
  try {
    const segments = await store.listSegments(sessionId);
    expect(segments, "nobody forked the session").toHaveLength(1);
    const entries: Entry<Item>[] = [];
    for await (const entry of store.readAll({ sessionId, segmentId: segments[0] as string }))
      entries.push(entry);
    return entries;
  } finally {
    await store.close();
  }
}

const toolResultsSent = (request: any) =>
  request.body.messages
    .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
    .filter((p: any) => p.type === "tool_result");

describe.each(BACKENDS)(
  "durable approvals across processes on the $name store (issue 25)",
  (backend) => {
    it("A asks and is SIGKILLed, B allows, C resumes: the tool ran exactly once and the model saw its result", async () => {
      const s = await setUp(backend);
      const sessionId = await runUntilAwaiting(s, 1);
      expect(await sideEffects(s)).toEqual([]);
      expect(await answer(s, sessionId, "toolu_0", "allow", "alice")).toBe("ANSWERED toolu_0 allow alice");

      s.w.double.enqueue(text("the side effect is done"));
      const c = s.spawn("resume", sessionId);
      expect(await c.line("RESULT")).toBe('RESULT finished "the side effect is done"');
      await c.exited;

      expect(await sideEffects(s)).toEqual(['toolu_0 {"n":0}']);
      const results = toolResultsSent(s.w.double.requests[1]);
      expect(results).toHaveLength(1);
      expect(JSON.stringify(results[0])).toContain('side effect {\\"n\\":0} done');
      const entries = await entriesOf(s, sessionId);
      const approvals = entries.filter((e) => e.kind.startsWith("approval_"));
      expect(approvals).toMatchObject([
        {
          kind: "approval_requested",
          call_id: "toolu_0",
          tool: "side",
          pod_path: ["root"],
          asked_by: "side-policy",
        },
        {
          kind: "approval_answered",
          call_id: "toolu_0",
          decision: "allow",
          by: "alice",
          reason: "allow from alice",
        },
      ]);
      expect(entries.map((e) => e.kind)).toContain("turn_end");
    });

    it("A dies while its approver is asking: the open turn is closed as awaiting approval, B answers, C runs the call once", async () => {
      const s = await setUp(backend);
      s.w.double.enqueue(sideBatch(1));
      const a = s.spawn("run-ask");
      await a.line("ASKING");
      const sessionId = (await a.line("SESSION")).split(" ")[1] as string;
      a.process.kill("SIGKILL");
      await a.exited;
      expect(await answer(s, sessionId, "toolu_0", "allow", "hank")).toBe("ANSWERED toolu_0 allow hank");
      s.w.double.enqueue(text("ran after the crash"));
      const c = s.spawn("resume", sessionId);
      expect(await c.line("RESULT")).toBe('RESULT finished "ran after the crash"');
      await c.exited;
      expect(await sideEffects(s)).toEqual(['toolu_0 {"n":0}']);
      const kinds = (await entriesOf(s, sessionId)).map((e) => e.kind);
      expect(kinds.slice(5)).toEqual([
        "approval_requested",
        "approval_answered",
        "run_completed",
        "invoke",
        "tool_result",
        "llm_usage",
        "assistant_item",
        "turn_end",
        "run_completed",
      ]);
    });

    it("a deny reaches the model as the call's error result with the reason; the tool never runs", async () => {
      const s = await setUp(backend);
      const sessionId = await runUntilAwaiting(s, 1);
      expect(await answer(s, sessionId, "toolu_0", "deny", "bob")).toBe("ANSWERED toolu_0 deny bob");
      s.w.double.enqueue(text("understood, not running it"));
      const c = s.spawn("resume", sessionId);
      expect(await c.line("RESULT")).toContain("RESULT finished");
      await c.exited;
      expect(await sideEffects(s)).toEqual([]);
      const [result] = toolResultsSent(s.w.double.requests[1]);
      expect(result).toMatchObject({ is_error: true });
      expect(JSON.stringify(result)).toContain("side call denied by bob: deny from bob");
    });

    it("a batch of three parallel calls answered one by one: the run goes on only when all are answered, each ran once", async () => {
      const s = await setUp(backend);
      const sessionId = await runUntilAwaiting(s, 3);
      expect(await answer(s, sessionId, "toolu_1", "allow", "carol")).toBe("ANSWERED toolu_1 allow carol");
      // Two of three still pending: a resume ends awaiting approval again, running nothing.
      const early = s.spawn("resume", sessionId);
      expect(await early.line("RESULT")).toContain("RESULT awaiting_approval");
      await early.exited;
      expect(await sideEffects(s)).toEqual([]);
      expect(await answer(s, sessionId, "toolu_0", "deny", "carol")).toBe("ANSWERED toolu_0 deny carol");
      expect(await answer(s, sessionId, "toolu_2", "allow", "dave")).toBe("ANSWERED toolu_2 allow dave");

      s.w.double.enqueue(text("two ran, one was denied"));
      const c = s.spawn("resume", sessionId);
      expect(await c.line("RESULT")).toContain("RESULT finished");
      await c.exited;
      expect((await sideEffects(s)).sort()).toEqual(['toolu_1 {"n":1}', 'toolu_2 {"n":2}']);
      expect(s.w.double.requests).toHaveLength(2);
      const results = toolResultsSent(s.w.double.requests[1]);
      expect(results.map((r: { tool_use_id: string }) => r.tool_use_id)).toEqual([
        "toolu_0",
        "toolu_1",
        "toolu_2",
      ]);
      expect(results[0]).toMatchObject({ is_error: true });
    });

    it("two answerers racing: exactly one answer is recorded, the other is told it was answered and by whom", async () => {
      const s = await setUp(backend);
      const sessionId = await runUntilAwaiting(s, 1);
      const racers = [
        s.spawn("answer", sessionId, "toolu_0", "allow", "erin", "--barrier"),
        s.spawn("answer", sessionId, "toolu_0", "deny", "frank", "--barrier"),
      ];
      await Promise.all(racers.map((r) => r.line("READY")));
      for (const r of racers) r.process.stdin?.write("go\n");
      const lines = await Promise.all(racers.map((r) => r.line("ANSWERED", "ERROR")));
      await Promise.all(racers.map((r) => r.exited));
      const won = lines.filter((l) => l.startsWith("ANSWERED"));
      const lost = lines.filter((l) => l.startsWith("ERROR"));
      expect(won, lines.join("\n")).toHaveLength(1);
      const winner = (won[0] as string).split(" ")[3];
      expect(lost[0]).toMatch(
        new RegExp(`^ERROR ApprovalAlreadyAnsweredError ${winner} :: .*already answered`),
      );
      const answers = (await entriesOf(s, sessionId)).filter((e) => e.kind === "approval_answered");
      expect(answers).toMatchObject([{ by: winner }]);
    });

    it("two resumers racing: one runs the call once, the other gets the store's busy error", async () => {
      const s = await setUp(backend);
      const sessionId = await runUntilAwaiting(s, 1);
      await answer(s, sessionId, "toolu_0", "allow", "gina");
      s.w.double.enqueue(text("ran it"));
      const racers = [s.spawn("resume", sessionId, "--barrier"), s.spawn("resume", sessionId, "--barrier")];
      await Promise.all(racers.map((r) => r.line("READY")));
      for (const r of racers) r.process.stdin?.write("go\n");
      const lines = await Promise.all(racers.map((r) => r.line("RESULT", "ERROR")));
      await Promise.all(racers.map((r) => r.exited));
      expect(
        lines.filter((l) => l.startsWith("RESULT finished")),
        lines.join("\n"),
      ).toHaveLength(1);
      expect(lines.filter((l) => l.startsWith("ERROR SessionBusyError"))).toHaveLength(1);
      expect(await sideEffects(s)).toEqual(['toolu_0 {"n":0}']);
      expect(s.w.double.requests).toHaveLength(2);
    });

    it("bad answers get one typed error each and write nothing", async () => {
      const s = await setUp(backend);
      const sessionId = await runUntilAwaiting(s, 1);
      const before = (await entriesOf(s, sessionId)).length;
      expect(await answer(s, sessionId, "toolu_nope", "allow", "x")).toMatch(
        /^ERROR ApprovalNotFoundError :: .*toolu_nope.*pending: toolu_0/,
      );
      expect(await answer(s, sessionId, "toolu_0", "malformed", "x")).toMatch(
        /^ERROR InvalidApprovalAnswerError :: /,
      );
      const unknown = s.spawn("answer", "0190aaaa-0000-7000-8000-000000000000", "toolu_0", "allow", "x");
      expect(await unknown.line("ERROR")).toMatch(/^ERROR NotFoundError :: session 0190aaaa/);
      await unknown.exited;
      expect(await answer(s, sessionId, "toolu_0", "allow", "x")).toBe("ANSWERED toolu_0 allow x");
      expect(await answer(s, sessionId, "toolu_0", "deny", "y")).toMatch(
        /^ERROR ApprovalAlreadyAnsweredError x :: /,
      );
      // Only the one good answer was written.
      expect((await entriesOf(s, sessionId)).length).toBe(before + 1);
    });
  },
  120_000,
);
