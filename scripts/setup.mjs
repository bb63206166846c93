#!/usr/bin/env node
// Brings a fresh clone to a runnable state with nothing but Node and npm:
// finds pnpm 12.4.2 (or fetches it through npx), installs the locked dependencies, builds.
// Idempotent and quick when everything is already in place. Shows progress on stderr while it
// works (scripts/setup-progress.mjs): a line per phase with its time, a line per package built,
// and a heartbeat while a phase is quiet; the tools' full output only when one fails.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PNPM_VERSION, pnpmCommand, TOOL_ENV } from "./pnpm-command.mjs";
import { buildReader, createProgress, elapsed, installReader } from "./setup-progress.mjs";

const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Runs pnpm with its output read line by line by `onLine`; resolves to `{ status, lines }`. */
function pnpmStreaming(args, onLine) {
  const [cmd, prefix] = pnpmCommand();
  return new Promise((resolve) => {
    const child = spawn(cmd, [...prefix, ...args], {
      cwd: REPO_ROOT,
      env: TOOL_ENV,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const lines = [];
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on("line", (line) => {
        lines.push(line);
        onLine(line);
      });
    }
    child.on("error", (error) => {
      lines.push(`cannot run pnpm: ${error.message}`);
      resolve({ status: 1, lines });
    });
    // "close" waits for both pipes to end, so every line has been read.
    child.on("close", (code) => resolve({ status: code ?? 1, lines }));
  });
}

/** How many workspace packages have a build script: the tasks turbo will report. */
function buildTaskCount() {
  const packagesDir = join(REPO_ROOT, "packages");
  return readdirSync(packagesDir).filter((dir) => {
    const manifest = join(packagesDir, dir, "package.json");
    return existsSync(manifest) && Boolean(JSON.parse(readFileSync(manifest, "utf8")).scripts?.build);
  }).length;
}

function fail(progress, what, result) {
  progress.line(`\`${what}\` failed (exit ${result.status}); its output:`);
  const shown = result.lines.filter(
    (line) => !/^\s*Progress: |cache hit, (?:suppressing|replaying) logs/.test(line),
  );
  process.stderr.write(`${shown.slice(-60).join("\n")}\n`);
  return false;
}

/**
 * Installs the locked dependencies and builds every package, reporting progress under `prefix`.
 * Resolves to true when both succeeded.
 */
export async function setup({ prefix = "setup" } = {}) {
  const progress = createProgress({ prefix });
  const [pnpm] = pnpmCommand();
  if (pnpm !== "pnpm")
    progress.line(`pnpm ${PNPM_VERSION} is not on PATH; running it through npx (fetched once)`);

  const install = installReader();
  progress.line("installing the locked dependencies (pnpm install --frozen-lockfile)…");
  const installing = progress.phase("installing the locked dependencies", install.status);
  const installed = await pnpmStreaming(
    ["install", "--frozen-lockfile", "--reporter=append-only"],
    install.onLine,
  );
  const installTime = installing.end();
  if (installed.status !== 0) return fail(progress, "pnpm install --frozen-lockfile", installed);
  progress.line(`${install.summary()} (${installTime})`);

  const build = buildReader(buildTaskCount());
  progress.line("building the packages (turbo run build; unchanged ones come from its cache)…");
  const building = progress.phase("building", build.status);
  const built = await pnpmStreaming(
    ["exec", "turbo", "run", "build", "--output-logs=new-only", "--log-order=grouped"],
    (line) => {
      const name = build.onLine(line);
      if (name) progress.line(`  built ${name} (${build.progress()}, ${elapsed(building.start)})`);
    },
  );
  const buildTime = building.end();
  if (built.status !== 0) return fail(progress, "turbo run build", built);
  progress.line(`${build.summary()} (${buildTime})`);
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (!(await setup())) process.exit(1);
}
