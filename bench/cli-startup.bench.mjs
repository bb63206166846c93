// Start-up cost of the `podkit` command, against a bare Node process in the same run.
//   BENCH cli.startup.ratio       `podkit --version` wall time / `node -e 0` wall time (medians); aim ≤ 2×
//   BENCH cli.startup.version_ms  `node packages/cli/dist/bin.js --version`
//   BENCH cli.startup.help_ms     `podkit --help` (every command's spec, no implementation loaded)
//   BENCH cli.startup.node_ms     `node -e 0`
// Commands load their implementation (manifest, pod, provider packages) only when they run, so
// these two stay close to a bare Node start. Runs alternate so machine load hits every side alike.
// Requires a built package (pnpm build).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../packages/cli/dist/bin.js", import.meta.url));
const ROUNDS = 25;

function wallMs(args) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`node ${args.join(" ")} exited ${code}`));
      else resolve(Number(process.hrtime.bigint() - started) / 1e6);
    });
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const sides = { node: ["-e", "0"], version: [BIN, "--version"], help: [BIN, "--help"] };
const times = { node: [], version: [], help: [] };
for (const args of Object.values(sides)) await wallMs(args); // warm the file cache
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, args] of Object.entries(sides)) times[name].push(await wallMs(args));
}
const node = median(times.node);
const version = median(times.version);
console.log(`BENCH cli.startup.ratio ${(version / node).toFixed(2)} x`);
console.log(`BENCH cli.startup.version_ms ${version.toFixed(1)} ms`);
console.log(`BENCH cli.startup.help_ms ${median(times.help).toFixed(1)} ms`);
console.log(`BENCH cli.startup.node_ms ${node.toFixed(1)} ms`);
