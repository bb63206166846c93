#!/usr/bin/env node
// Pack smoke test: packages are consumed one by one from the registry, not from this workspace.
// Packs every published package with `pnpm pack` (which rewrites `workspace:` ranges), checks
// each tarball statically (scripts/pack-checks.mjs), installs all tarballs with npm into a
// scratch project outside the repository (no workspace links), imports every entry point there
// (scripts/pack-smoke-probe.mjs) and runs the packed CLI. Needs built packages (npm test or
// pnpm build first) and registry access for third-party dependencies.
// Prints "pack-smoke: ok ..." or one "pack-smoke: <problem>" line per problem and exits 1.
//   node scripts/pack-smoke.mjs [--keep]   (--keep leaves the scratch folder for inspection)
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { checkPackedPackage } from "./pack-checks.mjs";
import { pnpmCommand, TOOL_ENV } from "./pnpm-command.mjs";

const repoRoot = fileURLToPath(new URL("..", import.meta.url)).replace(/[\\/]$/, "");
const keep = process.argv.includes("--keep");
const problems = [];

function run(cmd, args, options) {
  const result = spawnSync(cmd, args, { encoding: "utf8", env: TOOL_ENV, ...options });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ? result.error.message : ""}`;
  return { status: result.status ?? 1, stdout: result.stdout ?? "", output: output.trim() };
}

function tail(text, lines = 15) {
  return text.split("\n").slice(-lines).join("\n");
}

function publishedPackages() {
  const packages = [];
  for (const dir of readdirSync(join(repoRoot, "packages")).sort()) {
    const manifestPath = join(repoRoot, "packages", dir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    if (!manifest.private) packages.push({ dir: join(repoRoot, "packages", dir), manifest });
  }
  return packages;
}

const scratch = mkdtempSync(join(tmpdir(), "podkit-pack-smoke-"));
if (!relative(repoRoot, scratch).startsWith(`..${sep}`))
  throw new Error(`scratch folder ${scratch} is inside the repository`);
const tarballDir = join(scratch, "tarballs");
const projectDir = join(scratch, "project");
mkdirSync(tarballDir);
mkdirSync(projectDir);

const packages = publishedPackages();
const [pnpm, pnpmPrefix] = pnpmCommand();
for (const { dir, manifest } of packages) {
  if (!existsSync(join(dir, "dist"))) {
    problems.push(`${manifest.name}: dist/ is missing; build first (npm test or pnpm build)`);
    continue;
  }
  const before = new Set(readdirSync(tarballDir));
  const packed = run(pnpm, [...pnpmPrefix, "pack", "--pack-destination", tarballDir], { cwd: dir });
  const tarball = readdirSync(tarballDir).find((file) => !before.has(file) && file.endsWith(".tgz"));
  if (packed.status !== 0 || !tarball) {
    problems.push(`${manifest.name}: pnpm pack failed:\n${tail(packed.output)}`);
    continue;
  }
  const unpacked = join(scratch, "unpacked", manifest.name.replace("/", "+"));
  mkdirSync(unpacked, { recursive: true });
  const untar = run("tar", ["-xzf", join(tarballDir, tarball), "-C", unpacked]);
  if (untar.status !== 0) {
    problems.push(`${manifest.name}: cannot unpack ${tarball}: ${untar.output}`);
    continue;
  }
  problems.push(...checkPackedPackage(join(unpacked, "package"), repoRoot));
  manifest.tarball = `file:../tarballs/${tarball}`;
}

const installable = packages.filter(({ manifest }) => manifest.tarball);
const specs = Object.fromEntries(installable.map(({ manifest }) => [manifest.name, manifest.tarball]));
// The overrides pin every @podkit dependency between the packages to its tarball, so npm never
// looks for a @podkit package in the registry.
writeFileSync(
  join(projectDir, "package.json"),
  `${JSON.stringify({ name: "podkit-pack-smoke", private: true, type: "module", dependencies: specs, overrides: specs }, null, 2)}\n`,
);
const install = run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: projectDir });
if (install.status !== 0) {
  problems.push(`npm install of the tarballs failed:\n${tail(install.output)}`);
} else {
  copyFileSync(
    fileURLToPath(new URL("./pack-smoke-probe.mjs", import.meta.url)),
    join(projectDir, "probe.mjs"),
  );
  const probe = run(process.execPath, ["probe.mjs", ...Object.keys(specs)], { cwd: projectDir });
  if (probe.status !== 0) problems.push(...(probe.stdout.trim() || probe.output).split("\n"));
  checkCli();
}

function checkCli() {
  const cli = packages.find(({ manifest }) => manifest.name === "@podkit/cli")?.manifest;
  if (!cli?.tarball) return;
  const bin = join(projectDir, "node_modules", ".bin", "podkit");
  const home = join(scratch, "home");
  mkdirSync(home);
  const env = { ...TOOL_ENV, HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
  const version = run(bin, ["--version"], { cwd: projectDir, env });
  if (version.status !== 0 || !version.stdout.includes(cli.version)) {
    problems.push(
      `podkit --version exited ${version.status} without printing ${cli.version}:\n${tail(version.output)}`,
    );
  }
  copyFileSync(join(repoRoot, "examples/reviewer/manifest.toml"), join(projectDir, "manifest.toml"));
  const show = run(bin, ["manifest", "show", "manifest.toml"], { cwd: projectDir, env });
  if (show.status !== 0 || !show.stdout.includes("reviewer")) {
    problems.push(`podkit manifest show manifest.toml exited ${show.status}:\n${tail(show.output)}`);
  }
  // The demo's workspace ships inside @podkit/cli: the installed demo runs without the repository.
  const demo = run(bin, ["demo", "--dir", join(scratch, "demo")], { cwd: projectDir, env });
  if (demo.status !== 0 || !/scripted/i.test(demo.output)) {
    problems.push(`podkit demo exited ${demo.status}:\n${tail(demo.output)}`);
  }
}

if (problems.length > 0) {
  for (const problem of problems) console.log(`pack-smoke: ${problem}`);
  console.log(`pack-smoke: FAILED with ${problems.length} problem(s); scratch project kept at ${scratch}`);
  process.exitCode = 1;
} else {
  console.log(
    `pack-smoke: ok, ${packages.length} packages packed, installed from their tarballs in ${keep ? scratch : "a scratch project"} and imported; podkit --version, podkit manifest show and podkit demo ran`,
  );
  if (!keep) rmSync(scratch, { recursive: true, force: true });
}
