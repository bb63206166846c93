#!/usr/bin/env node
// Runs a command while every core is busy, to find tests that pass only on an idle machine
// (`pnpm test:loaded`: the README's test command; `node scripts/under-load.mjs npx vitest run
// test/x.test.ts` from a package: some files). It starts one busy loop per core
// (os.availableParallelism()), runs the command, stops the loops however it ends and exits with
// the command's exit code (128 + the signal's number when a signal ended it).
//
// The loops run at normal priority, not niced: a niced loop yields its core to the tests almost at
// once (weight 15 against 1024 on Linux), which simulates nothing, while the machines that fail
// are loaded by peers at the same priority (other test runs, builds, agents). No loop outlives the
// runner: each is killed on exit, error, SIGINT, SIGTERM and SIGHUP, and each also ends itself once
// its parent is gone (it checks its parent pid every ~0.1 s of spinning), which covers a runner
// killed with SIGKILL. `PODKIT_LOAD_PIDS` tells the command the loops' pids (comma-separated).
import { spawn } from "node:child_process";
import { availableParallelism, constants } from "node:os";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
// The README's test command (`npm test`), one step after the other, without a shell in between so
// that a signal reaches the step that is running. The tests run with turbo's cache off: a result
// replayed from an idle run says nothing about a loaded one.
const DEFAULT_STEPS = [
  [process.execPath, ["scripts/setup.mjs"], {}],
  [process.execPath, ["scripts/run-tests.mjs"], { TURBO_FORCE: "1" }],
];
// The runner's pid is passed in, not read by the loop at its start: a runner killed before a loop
// got that far would otherwise be replaced by the reaper as the parent the loop waits to lose.
const SPIN = `const p = Number(process.argv[1]); for (let i = 1; ; i++) if ((i & 0x3ffffff) === 0 && process.ppid !== p) process.exit();`;

const loops = [];
for (let i = 0; i < availableParallelism(); i++) {
  loops.push(spawn(process.execPath, ["-e", SPIN, String(process.pid)], { stdio: "ignore" }));
}
const pids = loops.map((loop) => loop.pid).filter((pid) => pid !== undefined);
console.error(`under-load: ${pids.length} busy loops (pids ${pids.join(", ")})`);

/** Kills the busy loops; synchronous, so that it also works from an "exit" handler. */
function stopLoops() {
  for (const loop of loops) {
    if (loop.exitCode === null && loop.signalCode === null) loop.kill("SIGKILL");
  }
}

/** Waits until every loop has exited (so none is left as a zombie of ours). */
function loopsGone() {
  return Promise.all(
    loops.map((loop) =>
      loop.exitCode !== null || loop.signalCode !== null || loop.pid === undefined
        ? undefined
        : new Promise((resolve) => loop.once("exit", resolve)),
    ),
  );
}

process.on("exit", stopLoops);

let current;
let interrupted;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    interrupted ??= signal;
    stopLoops();
    // From a terminal, Ctrl-C has reached the command already (same process group); from `kill`
    // it has not. Either way the command decides how to end and its exit code is ours.
    current?.kill(signal);
    if (!current) process.exit(128 + constants.signals[signal]);
  });
}

/** Runs one step with inherited output; resolves to its exit code. */
function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: process.cwd(),
      stdio: "inherit",
      env: { ...process.env, ...env, PODKIT_LOAD_PIDS: pids.join(",") },
    });
    current = child;
    child.once("error", (error) => {
      console.error(`under-load: cannot run ${command}: ${error.message}`);
      resolve(127);
    });
    child.once("exit", (code, signal) => resolve(code ?? 128 + (constants.signals[signal] ?? 0)));
  });
}

const given = process.argv.slice(2);
let steps = DEFAULT_STEPS;
if (given.length > 0) steps = [[given[0], given.slice(1), {}]];
else process.chdir(repoRoot);

let status = 0;
try {
  for (const [index, [command, args, env]] of steps.entries()) {
    status = await run(command, args, env);
    if (status !== 0) break;
    // Interrupted with steps left: what ran is not the command asked for, whatever this step said.
    if (interrupted && index < steps.length - 1) {
      status = 128 + constants.signals[interrupted];
      break;
    }
  }
} finally {
  stopLoops();
  await loopsGone();
}
process.exitCode = status;
