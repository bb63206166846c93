import { spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Item } from "@podkit/llm-worker";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import { openSessionStore, Pod, type PodOptions } from "@podkit/pod";
import { type Entry, readSessionView, type Store } from "@podkit/session-store";
import {
  type CapturedRequest,
  type ProviderDouble,
  type ScriptedResponse,
  startProviderDouble,
} from "@podkit/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compactingModel,
  REWORDED_COMPACT_PACK,
  VAGUE_COMPACT_PACK,
} from "../../pod/test/internal-eval-harness.js";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { BIN, REPO_ROOT, runBin } from "./run-bin.js";

// Issue 41's acceptance run (docs/evals.md), on both stores: 20 sessions recorded by the demo's pod
// (examples/demo/workspace: grep, read_file and bash, a compaction in four of them) against a
// stand-in model on the provider double, then `podkit eval` in child processes, as a user runs it:
// - a changed pack replays with `replay` tools and the double, with no network (every process runs
//   under a guard that logs and refuses any connection but loopback), per-item differences and
//   divergences in the report, every item a forked session `session show` displays;
// - a deliberately worse pack fails `--ci`; the unchanged pack passes with difference 0;
// - a compaction replayed with a changed `compact_system` is scored;
// - an eval SIGKILLed halfway and rerun redoes no finished item.

const SESSIONS = 20;
/** Sessions 1..COMPACTED were compacted after their second turn. */
const COMPACTED = 4;
const GUARD = fileURLToPath(new URL("./support/network-guard.mjs", import.meta.url));
const URL_VARIABLE = "PODKIT_EVAL_ACCEPTANCE_URL";
const SCRIPTED_KEY = "test-key";

const firstInput = (n: number) => `Where is ticket TCK-${n} parsed?`;
const secondInput = (n: number) => `List the tests for TCK-${n}.`;
/** What the demo's AGENTS.md tells the model (in the system prompt through `agents_md_section`). */
const AGENTS_HINT = "Code lives in `src/`";

const say = (text: string): ScriptedResponse => ({ parts: [{ type: "text", text }] });
const call = (name: string, args: Record<string, unknown>): ScriptedResponse => ({
  parts: [{ type: "tool_call", name, arguments: args }],
});

/**
 * The stand-in model: deterministic for a given request. It reads the system prompt as a model
 * would: told by AGENTS.md where the code lives, it greps `src/`, reads the file and answers
 * exactly; without AGENTS.md it greps the whole project for the id and gives up. A second turn
 * lists the tests with bash. A compaction request is `compactingModel`'s.
 */
function standIn(request: CapturedRequest): ScriptedResponse {
  const compaction = compactingModel(request);
  if (compaction !== undefined) return compaction;
  // biome-ignore lint/suspicious/noExplicitAny: Anthropic request bodies as JSON.
  const body = request.body as any;
  const system = (body.system ?? []).map((part: { text: string }) => part.text).join("\n");
  // biome-ignore lint/suspicious/noExplicitAny: messages.
  const messages: any[] = body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.role !== "user" || typeof message.content === "string") continue;
    const text: string | undefined = message.content.find((p: { type: string }) => p.type === "text")?.text;
    const match = /^(Where is ticket|List the tests for) TCK-(\d+)/.exec(text ?? "");
    if (match === null) continue;
    const n = Number(match[2]);
    const step = messages.slice(i + 1).filter((m) => m.role === "assistant").length;
    const usage = { inputTokens: 2400 + 200 * step, outputTokens: 30, cacheReadTokens: 2000 + 200 * step };
    const script =
      match[1] === "List the tests for"
        ? [
            call("bash", { command: "ls test" }),
            say(`The tests for TCK-${n} are in \`test/tickets.test.js\`.`),
          ]
        : system.includes(AGENTS_HINT)
          ? [
              call("grep", { pattern: "TCK-", path: "src" }),
              call("read_file", { path: "src/tickets.js" }),
              say(`TCK-${n} is parsed by \`ticketNumber\` in \`src/tickets.js\`.`),
            ]
          : [call("grep", { pattern: `TCK-${n}` }), say(`I found nothing about TCK-${n}.`)];
    return { ...(script[Math.min(step, script.length - 1)] as ScriptedResponse), usage };
  }
  return say("(the stand-in has no answer for this request)");
}

const PACKS = {
  // Changes nothing: the request bytes are the recording's.
  "packs/same.toml": "[prompt]\n",
  // Changes the system prompt, keeps what the model relies on (AGENTS.md).
  "packs/reworded.toml": `[prompt]\nagents_md_section = """\n## The project's AGENTS.md\nFollow it.\n\n{{ agents_md }}"""\n`,
  // Drops AGENTS.md from the system prompt: the model no longer knows where the code is.
  "packs/worse.toml": '[prompt]\nagents_md_section = ""\n',
  "packs/vague-compact.toml": VAGUE_COMPACT_PACK,
  "packs/reworded-compact.toml": REWORDED_COMPACT_PACK,
};

interface World {
  root: string;
  workspace: string;
  home: string;
  double: ProviderDouble;
  loaded: LoadedManifest;
  /** The store's environment (the PostgreSQL URL variable). */
  storeEnv: Record<string, string>;
  /** The 20 recorded sessions, in order (session n is index n-1). */
  sessions: string[];
  /** Loopback ports a process of the eval may reach: the double's, the database's. */
  ports: string[];
}

const database = usePostgresDatabases();

describe.each(["files", "postgres"] as const)("the eval acceptance run on the %s store", (kind) => {
  let world: World;

  beforeAll(async () => {
    const root = await realpath(await mkdtemp(join(tmpdir(), "podkit-eval-acceptance-")));
    const workspace = join(root, "ws");
    const home = join(root, "home");
    await cp(join(REPO_ROOT, "examples", "demo", "workspace"), workspace, { recursive: true });
    await mkdir(join(workspace, "packs"), { recursive: true });
    await mkdir(home, { recursive: true });
    for (const [file, text] of Object.entries(PACKS)) await writeFile(join(workspace, file), text);
    const storeEnv: Record<string, string> = {};
    const ports: string[] = [];
    if (kind === "postgres") {
      const url = await database();
      storeEnv[URL_VARIABLE] = url;
      ports.push(new URL(url).port || "5432");
      const manifest = join(workspace, ".podkit", "manifest.toml");
      await writeFile(
        manifest,
        `${await readFile(manifest, "utf8")}\n[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n`,
      );
    }
    const double = await startProviderDouble({ wire: "anthropic", respond: standIn });
    ports.push(new URL(double.baseUrl).port);
    const loaded = await loadManifest({ env: { cwd: workspace, home, env: storeEnv } });
    const warnings: string[] = [];
    const options: PodOptions = {
      model: double.baseUrl,
      env: { ANTHROPIC_API_KEY: SCRIPTED_KEY, ...storeEnv },
      autoApprove: true,
      attachMemory: false,
      packages: { "@podkit/store-postgres": () => import("@podkit/store-postgres") },
      onWarning: (warning) => warnings.push(warning.message),
    };
    const sessions: string[] = [];
    for (let n = 1; n <= SESSIONS; n++) {
      const pod = await Pod.fromManifest(loaded, options);
      try {
        for (const input of [firstInput(n), secondInput(n)]) {
          const result = await pod.run(input).result;
          expect(result.status, `session ${n}: ${input}`).toBe("finished");
        }
        if (n <= COMPACTED) expect((await pod.compact()).status).toBe("compacted");
        sessions.push(pod.sessionId as string);
      } finally {
        await pod.close();
      }
    }
    expect(warnings).toEqual([]);
    world = { root, workspace, home, double, loaded, storeEnv, sessions, ports };
  }, 240_000);

  afterAll(async () => {
    await world?.double.close();
    if (world !== undefined) await rm(world.root, { recursive: true, force: true });
  });

  /** `podkit …` in a child process under the network guard; the connections it made, from the guard's log. */
  async function podkit(...args: string[]) {
    const log = join(world.root, `net-${Math.random().toString(36).slice(2)}.jsonl`);
    await writeFile(log, "");
    const result = await runBin(args, {
      cwd: world.workspace,
      env: { ...guardEnv(log), HOME: world.home, ANTHROPIC_API_KEY: SCRIPTED_KEY, ...world.storeEnv },
      timeoutMs: 120_000,
    });
    return { ...result, connections: await connectionsIn(log) };
  }

  const evalArgs = (...args: string[]) => [
    "eval",
    ...args,
    "--set",
    `model.base_url="${world.double.baseUrl}"`,
  ];

  /** Every connection went to the double or the database, on loopback (`session show`: maybe none). */
  function expectOffline(connections: readonly Connection[], options: { loopbackOnly?: boolean } = {}) {
    if (options.loopbackOnly !== true) expect(connections.length).toBeGreaterThan(0);
    for (const connection of connections) {
      expect(connection.allowed, JSON.stringify(connection)).toBe(true);
      expect(world.ports, JSON.stringify(connection)).toContain(String(connection.port));
    }
  }

  async function itemFiles(evalId: string): Promise<Map<string, ItemFile>> {
    const dir = join(world.workspace, ".podkit", "evals", evalId, "items");
    const items = new Map<string, ItemFile>();
    for (const file of (await readdir(dir)).filter((f) => f.endsWith(".json")).sort()) {
      items.set(file, JSON.parse(await readFile(join(dir, file), "utf8")) as ItemFile);
    }
    return items;
  }

  it("replays the 20 sessions with a changed pack offline: differences and divergences per item, every item a forked session `session show` displays", async () => {
    const before = world.double.requests.length;
    const result = await podkit(
      ...evalArgs(...world.sessions, "--pack", "packs/reworded.toml", "--ci", "--eval-id", "reworded"),
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expectOffline(result.connections);
    // The double answered every request the items made, and nothing else answered.
    const items = [...(await itemFiles("reworded")).values()];
    expect(items).toHaveLength(SESSIONS);
    const requests = items.reduce((sum, item) => sum + item.item.requests, 0);
    expect(world.double.requests.length - before).toBe(requests);
    // The pack reached the model: every item's requests carry the reworded section.
    expect(
      world.double.requests.slice(before).every((r) => r.rawBody.includes("The project's AGENTS.md")),
    ).toBe(true);

    // One row per item with its difference and divergences, then the totals and the CI line.
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[1]).toMatch(/^case\s+score\s+baseline\s+diff\s+diverg\.\s+tokens/);
    for (const [index, session] of world.sessions.entries()) {
      expect(lines[2 + index]).toMatch(new RegExp(`^${session}\\s+1\\.000\\s+1\\.000\\s+0\\s+0\\s+.*pass$`));
    }
    expect(lines.at(-1)).toBe(`${SESSIONS} passed, 0 failed`);

    // Every item is a new session that starts with eval.origin naming its source, and whose read
    // model — what `session show` prints — holds the origin, the replayed turns and the scores.
    const store = await openStore(world);
    try {
      for (const [index, item] of items.entries()) {
        expect(item.sourceSessionId).toBe(world.sessions[index]);
        const entries = await firstSegment(store, item.sessionId);
        expect(entries[0]?.kind).toBe("segment_start");
        const origin = entries.findIndex((e) => e.kind === "extension" && e.domain === "eval.origin");
        expect(entries[origin]).toMatchObject({
          payload: { source_session: world.sessions[index], eval_id: "reworded" },
        });
        // Before the first replayed turn (after the pod's own `pod.invocation` record of --set).
        expect(entries.findIndex((e) => e.kind === "invoke")).toBeGreaterThan(origin);
        const view = await readSessionView(store, item.sessionId);
        const [segment] = view.segments;
        expect(segment?.eval?.origin?.sourceSession).toBe(world.sessions[index]);
        expect(segment?.turns.map((turn) => turn.input)).toEqual([
          firstInput(index + 1),
          secondInput(index + 1),
        ]);
        expect(segment?.eval?.scores.map((score) => score.pass)).not.toContain(false);
      }
    } finally {
      await store.close();
    }
    // …and `session show` prints it (the first, a middle and the last item).
    for (const n of [1, SESSIONS / 2, SESSIONS]) {
      const shown = await podkit("session", "show", items[n - 1]?.sessionId as string);
      expect(shown.code, shown.stderr).toBe(0);
      expectOffline(shown.connections, { loopbackOnly: true });
      expect(shown.stdout).toContain(firstInput(n));
      expect(shown.stdout).toContain(`TCK-${n} is parsed by`);
      expect(shown.stdout).toContain(`eval item of ${world.sessions[n - 1]} turns 1-2 (eval reworded;`);
      expect(shown.stdout).toContain("✓ score answer 1.000 (baseline 1.000)");
    }
  }, 240_000);

  it("a deliberately worse pack fails --ci with its divergences; the unchanged pack passes with difference 0", async () => {
    const worse = await podkit(
      ...evalArgs(...world.sessions, "--pack", "packs/worse.toml", "--ci", "--eval-id", "worse"),
    );
    expect(worse.code, worse.stdout + worse.stderr).toBe(5);
    expectOffline(worse.connections);
    expect(worse.stdout.trimEnd().split("\n").at(-1)).toBe(`0 passed, ${SESSIONS} failed`);
    for (const [index, session] of world.sessions.entries()) {
      const n = index + 1;
      expect(worse.stdout).toContain(`${session}: turn 1: grep {"pattern":"TCK-${n}"} was not recorded`);
    }
    for (const item of (await itemFiles("worse")).values()) {
      expect(item.difference).toBeLessThan(0);
      expect(item.divergences).toHaveLength(1);
    }

    const same = await podkit(
      ...evalArgs(...world.sessions, "--pack", "packs/same.toml", "--ci", "--json", "--eval-id", "same"),
    );
    expect(same.code, same.stdout + same.stderr).toBe(0);
    expectOffline(same.connections);
    const lines = same.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toBe(`${SESSIONS} passed, 0 failed`);
    const report = JSON.parse(lines.slice(0, -1).join("\n")) as { items: ItemFile[] };
    expect(report.items).toHaveLength(SESSIONS);
    for (const item of report.items) {
      expect(item.difference).toBe(0);
      expect(item.divergences).toEqual([]);
      // Every deterministic scorer scores the item exactly as the recording.
      for (const score of item.scores) expect(score.score).toBe(score.baseline?.score);
    }
  }, 240_000);

  it("scores a compaction replayed with a changed compact_system", async () => {
    const dataset = world.sessions
      .slice(0, COMPACTED)
      .map((session, index) => JSON.stringify({ session, checklist: [firstInput(index + 1)] }))
      .join("\n");
    await writeFile(join(world.workspace, "compactions.jsonl"), `${dataset}\n`);
    const base = [
      "--internal",
      "compaction",
      "--dataset",
      "compactions.jsonl",
      "--must-keep",
      "src/tickets.js",
      "--ci",
    ];
    const vague = await podkit(
      ...evalArgs(...base, "--pack", "packs/vague-compact.toml", "--eval-id", "vague"),
    );
    expect(vague.code, vague.stdout + vague.stderr).toBe(5);
    expectOffline(vague.connections);
    expect(vague.stdout.trimEnd().split("\n").at(-1)).toBe(`0 passed, ${COMPACTED} failed`);
    for (const [index, session] of world.sessions.slice(0, COMPACTED).entries()) {
      expect(vague.stdout).toMatch(
        new RegExp(`^${session}\\s+0\\.\\d+\\s+1\\.000\\s+-\\d\\.\\d+\\s+\\d+\\s+\\d+\\s+FAIL$`, "m"),
      );
      expect(vague.stdout).toContain(`${session}: checklist: lost: "${firstInput(index + 1)}"`);
    }
    const reworded = await podkit(
      ...evalArgs(
        ...base,
        "--pack",
        "packs/reworded-compact.toml",
        "--eval-id",
        "reworded-compact",
        "--json",
      ),
    );
    expect(reworded.code, reworded.stdout + reworded.stderr).toBe(0);
    expectOffline(reworded.connections);
    const report = JSON.parse(reworded.stdout.trimEnd().split("\n").slice(0, -1).join("\n")) as {
      items: { sessionId: string; difference: number; stop: string }[];
    };
    expect(report.items.map((item) => [item.stop, item.difference])).toEqual(
      Array.from({ length: COMPACTED }, () => ["compacted", 0]),
    );
    // The item is a session `session show` displays: its origin, the compaction, its scores.
    const shown = await podkit("session", "show", report.items[0]?.sessionId as string);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`eval item of ${world.sessions[0]} turns 1-2 (eval reworded-compact;`);
    expect(shown.stdout).toMatch(/compaction: continues \S+ after turn \d+ with a summary/);
    expect(shown.stdout).toContain("✓ score checklist 1.000 (baseline 1.000)");
  }, 240_000);

  it("an eval SIGKILLed halfway and rerun redoes no finished item", async () => {
    const evalId = "killed";
    const itemsDir = join(world.workspace, ".podkit", "evals", evalId, "items");
    const log = join(world.root, "net-killed.jsonl");
    const child = spawn(
      process.execPath,
      [
        BIN,
        ...evalArgs(
          ...world.sessions,
          "--pack",
          "packs/reworded.toml",
          "--concurrency",
          "1",
          "--eval-id",
          evalId,
        ),
      ],
      {
        cwd: world.workspace,
        env: {
          PATH: process.env.PATH ?? "",
          ...guardEnv(log),
          HOME: world.home,
          ANTHROPIC_API_KEY: SCRIPTED_KEY,
          ...world.storeEnv,
        },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const deadline = Date.now() + 90_000;
    let finished: string[] = [];
    while (Date.now() < deadline) {
      finished = (await readdir(itemsDir).catch(() => [] as string[])).filter((f) => f.endsWith(".json"));
      if (finished.length >= SESSIONS / 4) break;
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    child.kill("SIGKILL");
    expect(await exited, stderr).toBeNull();
    expectOffline(await connectionsIn(log));
    finished = (await readdir(itemsDir)).filter((f) => f.endsWith(".json")).sort();
    // Killed halfway: some items finished, not all.
    expect(finished.length).toBeGreaterThanOrEqual(SESSIONS / 4);
    expect(finished.length).toBeLessThan(SESSIONS);
    const mtimes = new Map(
      await Promise.all(finished.map(async (f) => [f, (await stat(join(itemsDir, f))).mtimeMs] as const)),
    );
    const done = new Set([...(await itemFiles(evalId)).values()].map((item) => item.sourceSessionId));

    const before = world.double.requests.length;
    const rerun = await podkit(
      ...evalArgs(...world.sessions, "--pack", "packs/reworded.toml", "--json", "--eval-id", evalId),
    );
    expect(rerun.code, rerun.stderr).toBe(0);
    expectOffline(rerun.connections);
    const report = JSON.parse(rerun.stdout) as { items: (ItemFile & { resumed: boolean })[] };
    expect(
      report.items
        .filter((item) => item.resumed)
        .map((item) => item.sourceSessionId)
        .sort(),
    ).toEqual([...done].sort());
    expect(report.items.every((item) => item.pass)).toBe(true);
    // No finished item ran again: its file is untouched, and the rerun asked the model nothing of its session.
    for (const [file, mtime] of mtimes) expect((await stat(join(itemsDir, file))).mtimeMs).toBe(mtime);
    const doneNumbers = world.sessions.flatMap((session, index) => (done.has(session) ? [index + 1] : []));
    for (const request of world.double.requests.slice(before)) {
      for (const n of doneNumbers) expect(request.rawBody).not.toContain(`TCK-${n} parsed?`);
    }
    expect(world.double.requests.length - before).toBe(
      report.items.filter((item) => !item.resumed).reduce((sum, item) => sum + item.item.requests, 0),
    );
  }, 240_000);

  it.runIf(kind === "files")(
    "the network guard refuses a model that is not on loopback (positive control)",
    async () => {
      const result = await podkit(
        "eval",
        world.sessions[0] as string,
        "--set",
        'model.base_url="http://192.0.2.1:8080"',
        "--json",
      );
      expect(result.connections).toContainEqual(
        expect.objectContaining({ host: "192.0.2.1", allowed: false }),
      );
      const report = JSON.parse(result.stdout) as { items: ItemFile[] };
      expect(report.items[0]?.error).toMatch(/network guard|refused|connect/i);
      expect(report.items[0]?.pass).toBe(false);
    },
    240_000,
  );
});

interface ItemFile {
  sessionId: string;
  sourceSessionId: string;
  difference: number | null;
  divergences: unknown[];
  scores: { name: string; score: number; baseline: { score: number } | null }[];
  item: { requests: number };
  pass: boolean;
  error?: string;
}

/** The connections a process under the guard made (one JSON line each in its log). */
async function connectionsIn(log: string): Promise<Connection[]> {
  return (await readFile(log, "utf8").catch(() => ""))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Connection);
}

interface Connection {
  host?: string;
  port?: string | number;
  allowed: boolean;
}

function guardEnv(log: string): Record<string, string> {
  return { NODE_OPTIONS: `--import ${GUARD}`, PODKIT_NET_LOG: log };
}

async function openStore(world: World): Promise<Store<Item>> {
  return (await openSessionStore(world.loaded, {
    env: world.storeEnv,
    storePackages: { "@podkit/store-postgres": () => import("@podkit/store-postgres") },
  })) as Store<Item>;
}

async function firstSegment(store: Store<Item>, sessionId: string): Promise<Entry<Item>[]> {
  const [segmentId] = (await store.listSegments(sessionId)).sort();
  const entries: Entry<Item>[] = [];
  for await (const entry of store.readAll({ sessionId, segmentId: segmentId as string })) entries.push(entry);
  return entries;
}
