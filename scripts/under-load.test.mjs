import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const RUNNER = fileURLToPath(new URL("./under-load.mjs", import.meta.url));

/** Whether a process is running: it exists and is not a zombie waiting to be reaped. */
function isRunning(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return true; // no /proc: the signal check is all there is
  }
}

/** Polls until `check()` holds, for at most `ms` (generous: this machine may be loaded). */
async function eventually(check, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/**
 * Starts the runner with a command that reports, on stdout, the busy loops' pids (from
 * PODKIT_LOAD_PIDS) and whether each was running, then runs `then` (a node snippet).
 */
function startRunner(then) {
  const command = `
    const pids = process.env.PODKIT_LOAD_PIDS.split(",").map(Number);
    console.log(JSON.stringify({ self: process.pid, pids, running: pids.map((pid) => { try { process.kill(pid, 0); return true; } catch { return false; } }) }));
    ${then}`;
  const runner = spawn(process.execPath, [RUNNER, process.execPath, "-e", command], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  runner.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  const report = () => {
    const line = stdout.split("\n").find((l) => l.startsWith("{"));
    return line ? JSON.parse(line) : undefined;
  };
  return { runner, report, exited: exitOf(runner) };
}

/**
 * The runner's exit; `{ code: "still running" }` (and the runner killed) when it has not exited
 * within a minute, as happens when a busy loop it started keeps it alive.
 */
function exitOf(runner) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      runner.kill("SIGKILL");
      resolve({ code: "still running" });
    }, 60_000);
    runner.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

describe("scripts/under-load.mjs (runs a command with every core busy)", () => {
  it("runs the command beside one busy loop per core, stops them after it and passes its exit code on", async () => {
    const { report, exited } = startRunner("process.exitCode = 7;");
    expect(await exited).toEqual({ code: 7, signal: null });
    const { pids, running } = report();
    expect(pids).toHaveLength(availableParallelism());
    expect(running.every(Boolean)).toBe(true);
    expect(pids.filter(isRunning)).toEqual([]);
  });

  it("passes a successful exit code on as 0", async () => {
    const { exited } = startRunner("");
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it("stops the loops and ends with the command when the runner is interrupted (SIGINT)", async () => {
    const { runner, report, exited } = startRunner("setInterval(() => {}, 1000);");
    expect(await eventually(() => report() !== undefined)).toBe(true);
    const { pids } = report();
    expect(pids.every(isRunning)).toBe(true);
    runner.kill("SIGINT");
    // The command died of the forwarded SIGINT: 128 + 2, as a shell reports it.
    expect(await exited).toEqual({ code: 130, signal: null });
    expect(pids.filter(isRunning)).toEqual([]);
  });

  it("leaves no busy loop behind even when the runner itself is killed with SIGKILL", async () => {
    const { runner, report, exited } = startRunner("setTimeout(() => {}, 60_000);");
    expect(await eventually(() => report() !== undefined)).toBe(true);
    const { self, pids } = report();
    try {
      expect(pids.every(isRunning)).toBe(true);
      runner.kill("SIGKILL");
      await exited;
      // Each loop notices its parent is gone within about a tenth of a second of spinning.
      expect(await eventually(() => pids.every((pid) => !isRunning(pid)))).toBe(true);
    } finally {
      process.kill(self, "SIGKILL"); // the command, orphaned along with the loops
    }
  });

  it("exits 127 and stops the loops when the command cannot be started", async () => {
    const runner = spawn(process.execPath, [RUNNER, "/nonexistent/command"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    runner.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    expect(await exitOf(runner)).toEqual({ code: 127, signal: null });
    expect(stderr).toMatch(/cannot run \/nonexistent\/command/);
    const pids = /pids ([\d, ]+)\)/.exec(stderr)[1].split(", ").map(Number);
    expect(pids.filter(isRunning)).toEqual([]);
  });
});
