import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MINIMAL, modelCalls, type PodTools, podTools, startDouble, tempRoot } from "./helpers.js";

let t: Awaited<ReturnType<typeof tempRoot>>;
let ws: string;
let tools: PodTools;
const saved = { ...process.env };

beforeEach(async () => {
  t = await tempRoot();
  ws = t.path("ws");
  process.env.ANTHROPIC_API_KEY = "sk-ant-test-should-not-leak";
  process.env.GH_TOKEN = "ghp-should-not-leak";
  process.env.DEPLOY_TOKEN = "deploy-allowed-by-manifest";
  process.env.PLAIN_SETTING = "plain-visible";
  // The shell's own mechanics (process group, timeout, output, environment), without the OS
  // sandbox: these tests read the pids a command writes, which a pid namespace would renumber.
  // The sandbox's own tests are in test/sandbox/.
  const manifest = await t.write(
    "ws/pod.toml",
    `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "read"\n[tools]\nbash = true\nbash_env = ["DEPLOY_TOKEN"]\n[sandbox]\nbackend = "none"\n`,
  );
  tools = await podTools(manifest, ws);
});
afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
});

/** True while `pid` exists and is not a zombie (a killed child not yet reaped is dead). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Which of `pids` are still alive once they all died, or after 10 s (generous: the machine may be busy). */
async function settle(pids: number[]): Promise<boolean[]> {
  for (let i = 0; i < 500 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 20));
  return pids.map(alive);
}

async function pidsOf(...files: string[]): Promise<number[]> {
  for (let i = 0; i < 2_000; i++) {
    const texts = await Promise.all(files.map((f) => readFile(join(ws, f), "utf8").catch(() => "")));
    if (texts.every((text) => text.trim() !== "")) return texts.map((text) => Number(text.trim()));
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("the command never wrote its pid files");
}

// A shell that starts a background child and then sleeps: both must die with the call.
const FORKING = "sleep 300 & echo $! > bg.pid; echo $$ > sh.pid; sleep 300";

describe("bash", () => {
  it("is off unless the manifest turns it on", async () => {
    expect(tools.server.names()).toContain("bash");
    const manifest = await t.write(
      "ws/off.toml",
      `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "read"\n`,
    );
    const off = await podTools(manifest, ws);
    expect(off.server.names()).toEqual(["glob", "grep", "read_file"]);
  });

  it("says in its description that it is not confined by scope when there is no sandbox", () => {
    const definition = tools.server.definitions().find((d) => d.name === "bash");
    expect(definition?.description).toContain("not confined by the file-system scope");
  });

  it("positive control: killing only the shell leaves its background child running", async () => {
    const shell = spawn("/bin/bash", ["-c", FORKING], { cwd: ws, stdio: "ignore" });
    const [bg] = await pidsOf("bg.pid", "sh.pid");
    shell.kill("SIGKILL");
    await new Promise((r) => shell.on("exit", r));
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(bg as number)).toBe(true);
    process.kill(bg as number, "SIGKILL");
  });

  it("kills the whole process group on timeout; nothing survives", async () => {
    // Long enough for the shell to start its child and write both pids on a busy machine.
    const result = await tools.call("bash", { command: FORKING, timeout_ms: 3_000 });
    expect(result.is_error).toBe(true);
    expect(result.summary).toContain("timed out after 3000 ms");
    const pids = await pidsOf("bg.pid", "sh.pid");
    expect(await settle(pids)).toEqual([false, false]);
  });

  it("kills the whole process group on abort; nothing survives", async () => {
    const controller = new AbortController();
    const running = tools.call("bash", { command: FORKING }, controller.signal);
    const pids = await pidsOf("bg.pid", "sh.pid");
    expect(pids.map(alive)).toEqual([true, true]);
    controller.abort();
    const result = await running;
    expect(result.summary).toContain("aborted");
    expect(await settle(pids)).toEqual([false, false]);
  });

  it("leaves no background process behind when the shell exits on its own", async () => {
    const result = await tools.call("bash", { command: "sleep 300 & echo $! > bg.pid; echo started" });
    expect(result.summary).toBe("exit code 0");
    expect(result.content).toBe("started\n");
    expect(await settle(await pidsOf("bg.pid"))).toEqual([false]);
  });

  it("reports the exit code and keeps the head and tail of output over the cap", async () => {
    expect((await tools.call("bash", { command: "echo oops >&2; exit 3" })).summary).toBe("exit code 3");
    const result = await tools.call("bash", { command: "echo FIRST-LINE; seq 1 100000; echo LAST-LINE" });
    expect(result.summary).toMatch(/^exit code 0, \d+ bytes of output \(middle omitted\)$/);
    expect(result.content?.startsWith("FIRST-LINE\n1\n2\n")).toBe(true);
    expect(result.content?.endsWith("99999\n100000\nLAST-LINE\n")).toBe(true);
    expect(result.content).toMatch(/\[… \d+ bytes of output omitted …\]/);
    expect(Buffer.byteLength(result.content ?? "")).toBeLessThan(31_000);
  });

  it("runs in the workspace without the API key or secret-looking variables, except those the manifest allows (called by the model)", async () => {
    const double = await startDouble();
    const [result] = await modelCalls(double, tools.server, [
      {
        name: "bash",
        arguments: {
          command:
            // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not a template
            'pwd; echo "key=${ANTHROPIC_API_KEY:-absent} gh=${GH_TOKEN:-absent} deploy=${DEPLOY_TOKEN:-absent} plain=${PLAIN_SETTING:-absent}"',
        },
      },
    ]);
    expect(result.content).toBe(
      `${ws}\nkey=absent gh=absent deploy=deploy-allowed-by-manifest plain=plain-visible\n`,
    );
  });
});
