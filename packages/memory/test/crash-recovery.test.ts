import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { Pod } from "@podkit/pod";
import { describeSession, type Entry, FsStore, SessionLog, sessionsRoot } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { runMemoryConsolidation } from "../src/consolidate/run-consolidation.js";
import { estimateSliceTokens } from "../src/extract/flat-lines.js";
import { EXTRACT_POINTER_DOMAIN } from "../src/extract/pointer.js";
import { runMemoryExtract } from "../src/extract/run-memory-extract.js";
import { attachMemory } from "../src/pod/attach-memory.js";
import { memoryPaths } from "../src/records/layout.js";
import { readAuditLog } from "../src/store/audit-log.js";
import {
  callTool,
  clock,
  type MemoryWorld,
  record,
  say,
  stagingFiles,
  useMemoryWorlds,
  writeFiles,
} from "./helpers.js";

// Kill tests with real child processes: a consolidation killed between writing its records and
// deleting its staging, and extracts killed mid-way. The next run integrates nothing twice and
// loses nothing.
const world = useMemoryWorlds();
const children: ChildProcess[] = [];
const stores: FsStore<Item>[] = [];
afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const store of stores.splice(0)) await store.close();
});

/** Starts a fixture and resolves with it once it printed `line` (its stdout so far included). */
async function childUntil(
  fixture: string,
  args: string[],
  line: string,
): Promise<{ child: ChildProcess; out: () => string }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "fixtures", fixture), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  let out = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(line)) resolve();
    });
    child.on("exit", (code) =>
      reject(new Error(`${fixture} exited (${code}) before printing ${line}: ${out}`)),
    );
  });
  return { child, out: () => out };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
};

const staging = (id: string, session: string, topic: string) =>
  JSON.stringify({
    id,
    created_at: "2026-04-15T09:00:00Z",
    session_id: session,
    source: { segment_id: `seg-${id}`, range: [1, 8] },
    decisions: [{ topic, decision: `Decided on ${topic}`, reason: "it lasts" }],
    discussions: [],
    attempts: [],
    requests: [],
  });

const writeDecision = (slug: string, item: string) =>
  callTool("memory_write", {
    kind: "decision",
    slug,
    content: record("status: resolved", `Decided on ${slug}.`),
    reason: `from ${item}`,
    staged: [item],
  });

describe("a consolidation killed between writing its records and deleting its staging", () => {
  it("the next run finishes it from the journal: the staging is never integrated twice, later staging is not lost", async () => {
    const w = await world({
      files: { "project/.podkit/memory/_staging/a.json": staging("a", "s1", "pnpm layout") },
    });
    const paths = memoryPaths(w.workspace);
    w.double.enqueue(writeDecision("use-pnpm", "s1-d1"), say("Integrated."), say("Nothing to tidy."));
    const { child } = await childUntil(
      "consolidate-crash-child.mjs",
      [w.workspace, w.home, w.double.baseUrl],
      "COMMITTED",
    );
    await kill(child);
    // Positive control: the record is on disk and its staging is still there with the lock, so a
    // run that did not know what was committed would integrate "a" again.
    expect(existsSync(join(paths.memoryDir, "decisions/use-pnpm.md"))).toBe(true);
    expect((await stagingFiles(w.workspace)).map((s) => s.id)).toEqual(["a"]);
    expect(existsSync(paths.lockFile)).toBe(true);
    const written = await readFile(join(paths.memoryDir, "decisions/use-pnpm.md"), "utf8");

    // A staging file extracted after the crash: the next run must integrate it, once.
    await writeFiles(w.workspace, {
      ".podkit/memory/_staging/b.json": staging("b", "s2", "release cadence"),
    });
    const requestsBefore = w.double.requests.length;
    w.double.enqueue(writeDecision("release-cadence", "s1-d1"), say("Integrated."), say("Nothing to tidy."));
    const result = await runMemoryConsolidation({ ...w.job(), force: true });
    expect(result).toMatchObject({
      status: "consolidated",
      consumed: ["b"],
      recovered: { stagingIds: ["a"] },
    });
    const input = w.double.requests[requestsBefore]?.body.messages[0].content[0].text as string;
    expect(input).toContain("Decided on release cadence");
    expect(input).not.toContain("Decided on pnpm layout");

    expect(await readFile(join(paths.memoryDir, "decisions/use-pnpm.md"), "utf8")).toBe(written);
    expect(existsSync(join(paths.memoryDir, "decisions/release-cadence.md"))).toBe(true);
    const applied = (await readAuditLog(paths)).filter((a) => a.status === "applied").map((a) => a.slug);
    expect(applied).toEqual(["use-pnpm", "release-cadence"]);
    expect(await stagingFiles(w.workspace)).toEqual([]);
    expect((await readdir(paths.stagingDir)).filter((n) => n.startsWith(".consolidation"))).toEqual([]);
  });
});

/** A real session log with one turn. */
async function oneTurnSession(w: MemoryWorld) {
  const store = new FsStore<Item>({ root: sessionsRoot(w.workspace) });
  stores.push(store);
  const log = await SessionLog.create<Item>(store, { systemPrompt: "sys", config: {} });
  await log.appendMany([
    { kind: "invoke", trigger: "user" },
    { kind: "user_input", text: "We use pnpm workspaces because npm hoisting broke builds." },
    {
      kind: "assistant_item",
      item: { type: "message", role: "assistant", content: [{ type: "text", text: "Noted." }] },
    },
    { kind: "turn_end", turn: 1 },
    { kind: "run_completed", result: "finished", interrupted: false },
  ]);
  return { store, sessionId: log.state.sessionId, segmentId: log.state.segmentId };
}

async function pointers(store: FsStore<Item>, sessionId: string, segmentId: string) {
  const out: unknown[] = [];
  for await (const e of store.readAll({ sessionId, segmentId }) as AsyncIterable<Entry<Item>>)
    if (e.kind === "extension" && e.domain === EXTRACT_POINTER_DOMAIN) out.push(e.payload);
  return out;
}

const EXTRACTED = {
  decisions: [{ topic: "pnpm workspace layout", decision: "Use pnpm workspaces", reason: "npm hoisting" }],
  discussions: [],
  attempts: [],
  requests: [],
};

describe("an extract killed mid-way", () => {
  it("while the model answers: nothing was staged, the next extract stages the same range once", async () => {
    const w = await world();
    const s = await oneTurnSession(w);
    w.double.enqueue({
      parts: [{ type: "text", text: "…" }],
      fault: { kind: "stall", afterEvents: 0, ms: 60_000 },
    });
    const { child } = await childUntil(
      "extract-crash-child.mjs",
      [w.workspace, w.home, w.double.baseUrl, s.sessionId, "stall"],
      "STARTED",
    );
    await until(() => w.double.requests.length > 0);
    await kill(child);
    expect(await stagingFiles(w.workspace)).toEqual([]);

    w.double.enqueue(callTool("write_extracted", EXTRACTED), say("ok"));
    const result = await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId });
    expect(result.status).toBe("extracted");
    const staged = await stagingFiles(w.workspace);
    expect(staged.map((e) => e.source)).toEqual([{ segment_id: s.segmentId, range: [1, 5] }]);
    expect(await pointers(s.store, s.sessionId, s.segmentId)).toEqual([
      { segment_id: s.segmentId, next_entry: 6 },
    ]);
  });

  it("after staging, before the pointer (and a consolidation in between): the slice is never staged or integrated twice", async () => {
    const w = await world();
    const s = await oneTurnSession(w);
    w.double.enqueue(callTool("write_extracted", EXTRACTED), say("ok"));
    const { child } = await childUntil(
      "extract-crash-child.mjs",
      [w.workspace, w.home, w.double.baseUrl, s.sessionId, "staged"],
      "STAGED",
    );
    await kill(child);
    // Positive control: staged, but the log has no pointer, so a plain rerun would extract it again.
    const [killed] = await stagingFiles(w.workspace);
    expect(killed).toMatchObject({ source: { segment_id: s.segmentId, range: [1, 5] } });
    expect(await pointers(s.store, s.sessionId, s.segmentId)).toEqual([]);

    // A consolidation consumes that staging before the session is extracted again.
    w.double.enqueue(writeDecision("use-pnpm", "s1-d1"), say("Integrated."), say("Nothing to tidy."));
    expect(await runMemoryConsolidation({ ...w.job(), force: true })).toMatchObject({
      status: "consolidated",
    });
    const requests = w.double.requests.length;

    const again = await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId });
    expect(again.status).toBe("nothing_new");
    expect(w.double.requests.length).toBe(requests);
    expect(await pointers(s.store, s.sessionId, s.segmentId)).toEqual([
      { segment_id: s.segmentId, next_entry: 6 },
    ]);
    expect(await stagingFiles(w.workspace)).toEqual([]);
    const applied = (await readAuditLog(memoryPaths(w.workspace))).filter((a) => a.status === "applied");
    expect(applied.map((a) => a.slug)).toEqual(["use-pnpm"]);
  });
});

describe("a session killed mid-session", () => {
  it("its tail below the threshold is extracted at the next open of the session", async () => {
    const w = await world();
    w.double.enqueue(say("One package per folder, in a pnpm workspace."), {
      parts: [{ type: "text", text: "…" }],
      fault: { kind: "stall", afterEvents: 0, ms: 60_000 },
    });
    const { child, out } = await childUntil(
      "pod-session-child.mjs",
      [w.workspace, w.home, w.double.baseUrl],
      "SESSION ",
    );
    await until(() => w.double.requests.length > 1);
    await kill(child);
    const sessionId = /SESSION (\S+)/.exec(out())?.[1] ?? "";
    // Positive control: the dead session is far below extract_threshold and was never extracted.
    const store = new FsStore<Item>({ root: sessionsRoot(w.workspace) });
    stores.push(store);
    const { head } = await describeSession(store, sessionId);
    const dead: Entry<Item>[] = [];
    for await (const e of store.readAll({ sessionId, segmentId: head.segmentId })) dead.push(e);
    expect(estimateSliceTokens(dead)).toBeLessThan(w.loaded.manifest.memory?.extract_threshold ?? 0);
    expect(await stagingFiles(w.workspace)).toEqual([]);

    const pod = await Pod.restore(w.loaded, sessionId, {
      model: w.double.baseUrl,
      env: { ANTHROPIC_API_KEY: "test-key" },
      clock,
      onWarning: () => {},
      attachMemory: false,
    });
    try {
      attachMemory(pod, { clock });
      w.double.enqueue(say("Third answer."), callTool("write_extracted", EXTRACTED), say("ok"));
      await pod.run("Third question.").result;
      await pod.whenJobsIdle();
    } finally {
      await pod.close();
    }
    const [staged] = await stagingFiles(w.workspace);
    expect(staged).toMatchObject({ session_id: sessionId, source: { range: [1, expect.any(Number)] } });
    const extractInput = JSON.stringify(w.double.requests.at(-2)?.body.messages);
    expect(extractInput).toContain("First question");
    expect(extractInput).toContain("Third question");
  });
});
