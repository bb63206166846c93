import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, runBin } from "./run-bin.js";
import { PtyScreen } from "./support/pty-screen.js";
import { type StreamGate, startStreamGate } from "./support/stream-gate.js";
import { doubleWorkspace, everyInvokeClosed, sessionEntries } from "./support/workspace.js";

let double: ProviderDouble;
let root: string;
let screen: PtyScreen | undefined;
let gate: StreamGate | undefined;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  screen?.kill();
  await gate?.close();
  gate = undefined;
  await double.close();
  await rm(root, { recursive: true, force: true });
});

describe("podkit run in a terminal", () => {
  it("streams, asks before bash, survives Ctrl-C, takes another prompt, exits, and resume continues the session", async () => {
    // The model is reached through a gate that can hold a response mid-stream for as long as the
    // test needs (a fixed stall would have to outlast the slowest machine).
    const through = await startStreamGate(double.baseUrl);
    gate = through;
    const ws = await doubleWorkspace(through.url);
    root = ws.root;
    // Turn 1: the text is held half way, so the first half is on screen before the rest exists.
    const firstAnswer = through.hold(1, 6);
    double.enqueue(
      { parts: [{ type: "text", text: "Streaming first half… and then the second half.", chunkSize: 4 }] },
      // Turn 2: a bash call the user approves, then the answer.
      { parts: [{ type: "tool_call", name: "bash", arguments: { command: "echo approved-$((6*7))" } }] },
      { parts: [{ type: "text", text: "bash printed approved-42." }] },
      // Turn 3: a long bash call, approved for good, interrupted by Ctrl-C while it runs.
      { parts: [{ type: "tool_call", name: "bash", arguments: { command: "sleep 30" } }] },
      // Turn 4: after the interrupt the session goes on.
      { parts: [{ type: "text", text: "Still here after the interrupt." }] },
    );
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: ws.home,
      ANTHROPIC_API_KEY: "test-key",
      TERM: "xterm-256color",
    };
    screen = new PtyScreen(process.execPath, [BIN, "run"], { cwd: ws.workspace, env });

    await screen.waitFor("›");
    screen.type("say something long\r");
    await firstAnswer.held;
    const partial = await screen.waitFor("Streaming first");
    expect(partial).not.toContain("second half.");
    firstAnswer.release();
    await screen.waitFor("and then the second half.");

    screen.type("run the check\r");
    await screen.waitFor("Allow bash(echo approved-$((6*7)))? [y]es / [n]o / [a]lways:");
    screen.type("y\r");
    await screen.waitFor("✓ bash(echo approved-$((6*7))) → exit code 0");
    await screen.waitFor("bash printed approved-42.");

    screen.type("wait a while\r");
    await screen.waitFor("Allow bash(sleep 30)?");
    screen.type("a\r");
    await screen.waitFor("⋯ bash(sleep 30)");
    screen.type("\u0003");
    await screen.waitFor("(turn interrupted; the session goes on)");

    screen.type("are you there?\r");
    await screen.waitFor("Still here after the interrupt.");
    screen.type("\u0004");
    const final = await screen.waitFor(/continue it with: podkit resume (\S+)/);
    expect(await screen.exited).toBe(0);
    const sessionId = /continue it with: podkit resume (\S+)/.exec(final)?.[1] as string;

    const entries = await sessionEntries(ws.workspace, sessionId);
    expect(everyInvokeClosed(entries)).toBe(true);
    expect(entries.filter((e) => e.kind === "invoke")).toHaveLength(4);
    expect(entries.filter((e) => e.kind === "turn_end").map((e) => e.turn)).toEqual([1, 2, 3]);
    // The interrupted bash call got its synthetic result and the interrupt note before turn 4.
    expect(
      entries.some((e) => e.kind === "system_item" && (e.item as { kind?: string }).kind === "interrupt"),
    ).toBe(true);
    const toolResults = entries
      .filter((e) => e.kind === "tool_result")
      .map((e) => (e.item as { summary: string }).summary);
    expect(toolResults[0]).toBe("exit code 0");
    expect(toolResults).toHaveLength(2);
    expect(double.requests).toHaveLength(5);

    double.enqueue({ parts: [{ type: "text", text: "Resumed and answering." }] });
    const resumed = await runBin(["resume", sessionId, "one more thing"], {
      cwd: ws.workspace,
      env: { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" },
    });
    expect(resumed.stderr).toContain(`continue it with: podkit resume ${sessionId}`);
    expect(resumed.stdout).toBe("Resumed and answering.\n");
    expect(resumed.code).toBe(0);
    const after = await sessionEntries(ws.workspace, sessionId);
    expect(everyInvokeClosed(after)).toBe(true);
    expect(after.filter((e) => e.kind === "turn_end").map((e) => e.turn)).toEqual([1, 2, 3, 4]);
    // The resumed request carried the whole conversation, including the first turn.
    expect(JSON.stringify(double.requests.at(-1)?.body.messages)).toContain("say something long");
  });

  it("a denied approval reaches the model as a denial; Ctrl-C twice at the prompt exits", async () => {
    const ws = await doubleWorkspace(double.baseUrl);
    root = ws.root;
    double.enqueue(
      { parts: [{ type: "tool_call", name: "bash", arguments: { command: "touch should-not-exist" } }] },
      { parts: [{ type: "text", text: "Understood, I will not run it." }] },
    );
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: ws.home,
      ANTHROPIC_API_KEY: "test-key",
      TERM: "xterm-256color",
    };
    screen = new PtyScreen(process.execPath, [BIN, "run"], { cwd: ws.workspace, env });
    await screen.waitFor("›");
    screen.type("make a file\r");
    await screen.waitFor("Allow bash(touch should-not-exist)?");
    screen.type("maybe\r");
    // Not an answer: asked again.
    await screen.waitFor(/Allow bash\(touch should-not-exist\)\?[^\n]*maybe\n.*Allow bash/s);
    screen.type("n\r");
    await screen.waitFor("✗ bash(touch should-not-exist) → denied: the user denied this bash call");
    await screen.waitFor("Understood, I will not run it.");
    const denial = double.requests[1]?.body.messages.at(-1).content[0];
    expect(denial).toMatchObject({ type: "tool_result", is_error: true });
    screen.type("\u0003");
    await screen.waitFor("(Ctrl-C again or Ctrl-D to exit)");
    screen.type("\u0003");
    await screen.waitFor("continue it with: podkit resume");
    expect(await screen.exited).toBe(0);
    expect(existsSync(join(ws.workspace, "should-not-exist"))).toBe(false);
  });
});

describe("podkit run with a prompt", () => {
  it("SIGINT interrupts the turn: exit 130, the invoke is closed, and resume continues the session", async () => {
    const ws = await doubleWorkspace(double.baseUrl);
    root = ws.root;
    double.enqueue({ parts: [{ type: "tool_call", name: "bash", arguments: { command: "sleep 29.713" } }] });
    const child = spawn(process.execPath, [BIN, "run", "wait", "--yes"], {
      cwd: ws.workspace,
      env: { PATH: process.env.PATH ?? "", HOME: ws.home, ANTHROPIC_API_KEY: "test-key" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    while (double.requests.length < 1 || !(await bashRunning())) await new Promise((r) => setTimeout(r, 50));
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(130);
    expect(stderr).toContain("interrupted (Ctrl-C)");
    const sessionId = /podkit resume (\S+)/.exec(stderr)?.[1] as string;
    expect(everyInvokeClosed(await sessionEntries(ws.workspace, sessionId))).toBe(true);
    expect(stdout).not.toContain("✓ bash");
    double.enqueue({ parts: [{ type: "text", text: "The wait was interrupted." }] });
    const resumed = await runBin(["resume", sessionId, "what happened?"], {
      cwd: ws.workspace,
      env: { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" },
    });
    expect(resumed.stdout).toBe("The wait was interrupted.\n");
    // The interrupted call was closed with the synthetic result before the new input.
    expect(JSON.stringify(double.requests.at(-1)?.body.messages)).toContain(
      "Interrupted: the user stopped the turn",
    );
  });
});

describe("podkit run reading piped input", () => {
  it("Ctrl-C (SIGINT) between turns says interrupted and ends the session; nobody can press it twice", async () => {
    const ws = await doubleWorkspace(double.baseUrl);
    root = ws.root;
    double.enqueue({ parts: [{ type: "text", text: "first answer" }] });
    const child = spawn(process.execPath, [BIN, "run"], {
      cwd: ws.workspace,
      env: { PATH: process.env.PATH ?? "", HOME: ws.home, ANTHROPIC_API_KEY: "test-key" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    child.stdin.write("hello\n");
    // The input stays open: the session waits for the next line when the signal comes.
    while (!stdout.includes("first answer")) await new Promise((r) => setTimeout(r, 50));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(stdout).toContain("interrupted\n");
    expect(stderr).toContain("continue it with: podkit resume");
  });
});

/** True once a `sleep 29.713` started by the CLI's bash tool is running. */
async function bashRunning(): Promise<boolean> {
  const { execFile } = await import("node:child_process");
  return new Promise((resolve) =>
    execFile("pgrep", ["-f", "sleep 29.713"], (error) => {
      // Without pgrep, give the tool a moment to start instead.
      if ((error as NodeJS.ErrnoException | null)?.code === "ENOENT") setTimeout(() => resolve(true), 500);
      else resolve(error === null);
    }),
  );
}
