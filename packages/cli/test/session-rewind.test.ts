import { spawn } from "node:child_process";
import { cp, lstat, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type ProviderDouble, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { BIN, runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit session rewind <id> --to-turn N` (issue 42), end to end: sessions recorded by real
// `podkit run`/`resume` processes whose model (the provider double) edits files with edit_file,
// write_file and bash, then rewound by the real bin.

const database = usePostgresDatabases();
const URL_VARIABLE = "PODKIT_TEST_SESSIONS_URL";

let double: ProviderDouble;
const roots: string[] = [];
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  await double.close();
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

const text = (value: string): ScriptedResponse => ({ parts: [{ type: "text", text: value }] });
const call = (name: string, args: Record<string, unknown>): ScriptedResponse => ({
  parts: [{ type: "tool_call", name, arguments: args }],
});
const edit = (path: string, from: string, to: string) =>
  call("edit_file", { path, old_string: from, new_string: to });
const bash = (command: string) => call("bash", { command });

const FILES: Record<string, string> = {
  "src/a.ts": "export const a = 1;\n",
  "src/b.ts": "export const b = 1;\n",
  "src/c.ts": "export const c = 1;\n",
  "notes/old.txt": "to be removed\n",
  "notes/d.txt": "colour: red\n",
};

async function workspace(extra = "") {
  const ws = await doubleWorkspace(double.baseUrl, extra);
  roots.push(ws.root);
  for (const [path, content] of Object.entries(FILES)) {
    await mkdir(dirname(join(ws.workspace, path)), { recursive: true });
    await writeFile(join(ws.workspace, path), content);
  }
  return ws;
}

/** Every file under `root` but `.podkit/`, path → content. */
async function files(root: string, dir = ""): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const name of (await readdir(join(root, dir))).sort()) {
    const path = dir === "" ? name : `${dir}/${name}`;
    if (path === ".podkit") continue;
    if ((await lstat(join(root, path))).isDirectory()) Object.assign(found, await files(root, path));
    else found[path] = await readFile(join(root, path), "utf8");
  }
  return found;
}

const sessionOf = (stderr: string) => /podkit resume (\S+)/.exec(stderr)?.[1] as string;

/** A podkit process killed with SIGKILL once the double has received `requests` requests in all. */
function killedAfterRequests(args: string[], cwd: string, env: Record<string, string>, requests: number) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const poll = setInterval(() => {
      if (double.requests.length >= requests) child.kill("SIGKILL");
    }, 20);
    child.on("close", (_code, signal) => {
      clearInterval(poll);
      if (signal === "SIGKILL") resolve();
      else reject(new Error(`the process ended by itself (${signal}): ${stderr}`));
    });
  });
}

describe("podkit session rewind", () => {
  it("acceptance: edit_file ×3, a file created and one deleted with bash, one rewritten with sed -i, the process SIGKILLed; on another machine sharing the PostgreSQL store, rewind to turn 2 restores every file byte for byte and the new file is gone", async () => {
    const ws = await workspace(`[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n`);
    const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", [URL_VARIABLE]: await database() };
    const podkit = (args: string[], cwd = ws.workspace) => runBin(args, { cwd, env });

    double.enqueue(edit("src/a.ts", "= 1", "= 2"), text("one done"));
    const one = await podkit(["run", "turn one", "--yes"]);
    expect(one.code, one.stderr).toBe(0);
    const sessionId = sessionOf(one.stderr);
    double.enqueue(
      edit("src/b.ts", "= 1", "= 2"),
      bash("sed -i 's/red/green/' notes/d.txt"),
      text("two done"),
    );
    const two = await podkit(["resume", sessionId, "turn two", "--yes"]);
    expect(two.code, two.stderr).toBe(0);
    const atTurnTwo = await files(ws.workspace);
    expect(atTurnTwo["notes/d.txt"]).toBe("colour: green\n");

    double.enqueue(
      edit("src/a.ts", "= 2", "= 3"),
      edit("src/c.ts", "= 1", "= 3"),
      bash("echo fresh > notes/new.txt && rm notes/old.txt"),
      bash("sed -i 's/green/blue/' notes/d.txt"),
      text("three done"),
    );
    const three = await podkit(["resume", sessionId, "turn three", "--yes"]);
    expect(three.code, three.stderr).toBe(0);
    // Turn four edits a file, then the process dies waiting for the model.
    double.enqueue(edit("src/b.ts", "= 2", "= 4"), {
      parts: [{ type: "text", text: "never" }],
      fault: { kind: "stall", afterEvents: 0, ms: 120_000 },
    });
    await killedAfterRequests(
      ["resume", sessionId, "turn four", "--yes"],
      ws.workspace,
      env,
      double.requests.length + 2,
    );
    const beforeRewind = await files(ws.workspace);
    expect(beforeRewind).toMatchObject({
      "src/a.ts": "export const a = 3;\n",
      "src/b.ts": "export const b = 4;\n",
      "src/c.ts": "export const c = 3;\n",
      "notes/new.txt": "fresh\n",
      "notes/d.txt": "colour: blue\n",
    });
    expect(beforeRewind["notes/old.txt"]).toBeUndefined();

    // Another machine: another directory holding a copy of the workspace, the same database.
    const machineB = join(ws.root, "machine-b");
    await cp(ws.workspace, machineB, { recursive: true });
    const rewound = await podkit(["session", "rewind", sessionId, "--to-turn", "2"], machineB);
    expect(rewound.code, rewound.stderr).toBe(0);
    expect(rewound.stdout).toContain(`rewound session ${sessionId} to turn 2`);
    expect(rewound.stdout).toMatch(/removed {3}notes\/new\.txt/);
    expect(await files(machineB)).toEqual(atTurnTwo);
    // Byte for byte, the deleted file back and the created one gone.
    expect(await readFile(join(machineB, "notes/old.txt"), "utf8")).toBe("to be removed\n");
    await expect(lstat(join(machineB, "notes/new.txt"))).rejects.toThrow(/ENOENT/);

    // The session goes on from turn 2 there: its next request holds turns 1 and 2, not 3 or 4.
    double.enqueue(text("five done"));
    const five = await podkit(["resume", sessionId, "turn five"], machineB);
    expect(five.code, five.stderr).toBe(0);
    const body = JSON.stringify(double.requests.at(-1)?.body);
    expect(body).toContain("turn two");
    expect(body).not.toContain("turn three");
    expect(body).not.toContain("turn four");
  }, 120_000);

  describe("on the workspace's own store", () => {
    /** Two turns: turn 1 writes a file, turn 2 edits it and creates another. */
    async function twoTurns() {
      const ws = await workspace();
      const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" };
      const podkit = (...args: string[]) => runBin(args, { cwd: ws.workspace, env });
      double.enqueue(edit("src/a.ts", "= 1", "= 2"), text("one"));
      const one = await podkit("run", "one", "--yes");
      expect(one.code, one.stderr).toBe(0);
      const sessionId = sessionOf(one.stderr);
      const atTurnOne = await files(ws.workspace);
      double.enqueue(
        edit("src/a.ts", "= 2", "= 3"),
        call("write_file", { path: "src/new.ts", content: "export {};\n" }),
        text("two"),
      );
      expect((await podkit("resume", sessionId, "two", "--yes")).code).toBe(0);
      return { ws, podkit, sessionId, atTurnOne };
    }

    it("an edit outside the pod: refused, each path named with the --force hint, exit 1, nothing changed; --force proceeds", async () => {
      const { ws, podkit, sessionId, atTurnOne } = await twoTurns();
      await writeFile(join(ws.workspace, "src/a.ts"), "mine\n");
      await writeFile(join(ws.workspace, "src/new.ts"), "also mine\n");
      const before = await files(ws.workspace);

      const refused = await podkit("session", "rewind", sessionId, "--to-turn", "1");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^error: cannot rewind session \S+: 2 files changed outside the pod/m);
      expect(refused.stderr).toMatch(/^ {2}src\/a\.ts$/m);
      expect(refused.stderr).toMatch(/^ {2}src\/new\.ts$/m);
      expect(refused.stderr).toMatch(/^hint: rerun with --force/m);
      expect(refused.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(await files(ws.workspace)).toEqual(before);

      const forced = await podkit("session", "rewind", sessionId, "--to-turn", "1", "--force");
      expect(forced.code, forced.stderr).toBe(0);
      expect(await files(ws.workspace)).toEqual(atTurnOne);
      expect(forced.stderr).toContain(`continue it with: podkit resume ${sessionId}`);
    }, 60_000);

    it("--dry-run prints what would change and changes nothing; --json gives the report", async () => {
      const { ws, podkit, sessionId } = await twoTurns();
      const before = await files(ws.workspace);
      const sessions = await readdir(join(ws.workspace, ".podkit", "sessions", sessionId));

      const dry = await podkit("session", "rewind", sessionId, "--to-turn", "1", "--dry-run");
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toContain(`would rewind session ${sessionId} to turn 1`);
      expect(dry.stdout).toMatch(/^ {2}restore {3}src\/a\.ts$/m);
      expect(dry.stdout).toMatch(/^ {2}remove {4}src\/new\.ts$/m);
      expect(dry.stdout).toContain("run without --dry-run");
      const json = await podkit("session", "rewind", sessionId, "--to-turn", "1", "--dry-run", "--json");
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        sessionId,
        toTurn: 1,
        dryRun: true,
        conversation: { action: "fork" },
        files: [
          { path: "src/a.ts", action: "write" },
          { path: "src/new.ts", action: "delete", to: null },
        ],
      });
      expect(await files(ws.workspace)).toEqual(before);
      expect(await readdir(join(ws.workspace, ".podkit", "sessions", sessionId))).toEqual(sessions);
    }, 60_000);

    it("--files-only keeps the conversation; --conversation-only keeps the files", async () => {
      const { ws, podkit, sessionId } = await twoTurns();
      const atTurnTwo = await files(ws.workspace);
      const conversation = await podkit(
        "session",
        "rewind",
        sessionId,
        "--to-turn",
        "1",
        "--conversation-only",
        "--json",
      );
      expect(conversation.code, conversation.stderr).toBe(0);
      expect(JSON.parse(conversation.stdout)).toMatchObject({ conversation: { action: "fork" }, files: [] });
      expect(await files(ws.workspace)).toEqual(atTurnTwo);

      const filesOnly = await podkit("session", "rewind", sessionId, "--to-turn", "0", "--files-only");
      expect(filesOnly.code, filesOnly.stderr).toBe(0);
      expect(filesOnly.stdout).toContain("conversation: left as it is (--files-only)");
      expect(await files(ws.workspace)).toEqual(FILES);
    }, 60_000);

    it("command-line mistakes are usage errors (exit 2); an unknown session names where to look (exit 1)", async () => {
      const { podkit, sessionId } = await twoTurns();
      const noTurn = await podkit("session", "rewind", sessionId);
      expect(noTurn.code).toBe(2);
      expect(noTurn.stderr).toMatch(/^error: --to-turn is required/m);
      const both = await podkit(
        "session",
        "rewind",
        sessionId,
        "--to-turn",
        "1",
        "--files-only",
        "--conversation-only",
      );
      expect(both.code).toBe(2);
      const bad = await podkit("session", "rewind", sessionId, "--to-turn", "x");
      expect(bad.code).toBe(2);
      const late = await podkit("session", "rewind", sessionId, "--to-turn", "9");
      expect(late.code).toBe(1);
      expect(late.stderr).toMatch(/has 2 finished turns: there is no turn 9/);
      const unknown = await podkit(
        "session",
        "rewind",
        "0190aaaa-0000-7000-8000-000000000000",
        "--to-turn",
        "1",
      );
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^hint: `podkit session list`/m);
    }, 60_000);
  });
});
