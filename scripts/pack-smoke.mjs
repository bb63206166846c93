#!/usr/bin/env node
// Pack smoke test: packages are consumed one by one from the registry, not from this workspace.
// Packs every published package the way a release does (scripts/release-packages.mjs: `pnpm pack`,
// which rewrites `workspace:` ranges), checks each tarball statically (scripts/pack-checks.mjs),
// then, outside the repository:
//   - installs all tarballs with npm into a scratch project (no workspace links), imports every
//     entry point there (scripts/pack-smoke-probe.mjs), runs the project's `podkit`, and
//     type-checks a consumer file importing every entry point with a strict tsc that also checks
//     the packages' declarations (skipLibCheck: false) and has no @types package of its own;
//   - installs the CLI globally the way the README tells a user (`npm install -g` of the tarballs)
//     into a throwaway prefix, on an empty HOME with npm's cache and the XDG folders inside the
//     scratch folder and no npm_config_* of the caller, then runs `<prefix>/bin/podkit --version`
//     and `<prefix>/bin/podkit demo` from a fresh empty folder; every installed package must accept
//     the lowest Node the CLI's engines.node allows (installing there prints no engine warning).
// Needs built packages (npm run setup, npm test or pnpm build first) and registry access for
// third-party dependencies. Prints "pack-smoke: ok ..." with the time each phase took, or one
// "pack-smoke: <problem>" line per problem and exits 1.
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
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { formatVersion, lowestVersion, satisfies } from "./node-engines.mjs";
import { checkPackedPackage } from "./pack-checks.mjs";
import { TOOL_ENV } from "./pnpm-command.mjs";
import { packPackages, publishedPackages } from "./release-packages.mjs";

const repoRoot = fileURLToPath(new URL("..", import.meta.url)).replace(/[\\/]$/, "");
const keep = process.argv.includes("--keep");
const problems = [];
const timings = [];
const notes = [];

function run(cmd, args, options) {
  const result = spawnSync(cmd, args, { encoding: "utf8", env: TOOL_ENV, ...options });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ? result.error.message : ""}`;
  return { status: result.status ?? 1, stdout: result.stdout ?? "", output: output.trim() };
}

/** Runs `step`, noting how long it took under `label` for the closing line. */
function timed(label, step) {
  const start = performance.now();
  try {
    return step();
  } finally {
    timings.push(`${label} ${((performance.now() - start) / 1000).toFixed(1)} s`);
  }
}

function tail(text, lines = 15) {
  return text.split("\n").slice(-lines).join("\n");
}

const scratch = mkdtempSync(join(tmpdir(), "podkit-pack-smoke-"));
if (!relative(repoRoot, scratch).startsWith(`..${sep}`))
  throw new Error(`scratch folder ${scratch} is inside the repository`);
const tarballDir = join(scratch, "tarballs");
const projectDir = join(scratch, "project");
mkdirSync(tarballDir);
mkdirSync(projectDir);

const packages = publishedPackages(repoRoot);
const { packed, problems: packProblems } = timed("pack", () => packPackages(packages, tarballDir));
problems.push(...packProblems);
for (const { name, dir, tarball } of packed) {
  const unpacked = join(scratch, "unpacked", name.replace("/", "+"));
  mkdirSync(unpacked, { recursive: true });
  const untar = run("tar", ["-xzf", tarball, "-C", unpacked]);
  if (untar.status !== 0) {
    problems.push(`${name}: cannot unpack ${tarball}: ${untar.output}`);
    continue;
  }
  problems.push(
    ...checkPackedPackage(join(unpacked, "package"), repoRoot, relative(repoRoot, dir).split(sep).join("/")),
  );
}

const specs = Object.fromEntries(
  packed.map(({ name, tarball }) => [name, `file:../tarballs/${relative(tarballDir, tarball)}`]),
);
const cli = packed.find(({ name }) => name === "@podkit/cli");
// The overrides pin every @podkit dependency between the packages to its tarball, so npm never
// looks for a @podkit package in the registry.
writeFileSync(
  join(projectDir, "package.json"),
  `${JSON.stringify({ name: "podkit-pack-smoke", private: true, type: "module", dependencies: specs, overrides: specs }, null, 2)}\n`,
);
const install = timed("project install", () =>
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: projectDir }),
);
if (install.status !== 0) {
  problems.push(`npm install of the tarballs failed:\n${tail(install.output)}`);
} else {
  copyFileSync(
    fileURLToPath(new URL("./pack-smoke-probe.mjs", import.meta.url)),
    join(projectDir, "probe.mjs"),
  );
  const probe = timed("imports", () =>
    run(process.execPath, ["probe.mjs", ...Object.keys(specs)], { cwd: projectDir }),
  );
  if (probe.status !== 0) problems.push(...(probe.stdout.trim() || probe.output).split("\n"));
  timed("project podkit", checkProjectCli);
  timed("consumer tsc", checkConsumerTypes);
}
if (cli) checkGlobalInstall();

/** The CLI as a dependency of a project: node_modules/.bin/podkit. */
function checkProjectCli() {
  if (!cli) return;
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

/**
 * The published types stand alone: a consumer made the way `tsc --init` (TypeScript 5.9) sets up
 * a Node project (its "For nodejs" lines: lib esnext, types ["node"]), with skipLibCheck off so
 * every declaration file of every package is checked, imports every entry point. The project
 * installs nothing but the tarballs: each type package must come from some package's dependencies.
 */
function checkConsumerTypes() {
  const imports = [];
  for (const { name } of packed) {
    const manifest = JSON.parse(readFileSync(join(projectDir, "node_modules", name, "package.json"), "utf8"));
    for (const subpath of Object.keys(manifest.exports ?? { ".": null })) {
      if (subpath === "./package.json") continue;
      imports.push(`${name}${subpath.slice(1)}`);
    }
  }
  writeFileSync(
    join(projectDir, "consumer.ts"),
    `${imports.map((specifier, i) => `import * as entry${i} from "${specifier}";`).join("\n")}\n\nexport const entries = [${imports.map((_, i) => `entry${i}`).join(", ")}];\n`,
  );
  const compilerOptions = {
    module: "nodenext",
    target: "esnext",
    lib: ["esnext"],
    types: ["node"],
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    strict: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    noUncheckedSideEffectImports: true,
    moduleDetection: "force",
    skipLibCheck: false,
    noEmit: true,
  };
  writeFileSync(
    join(projectDir, "tsconfig.json"),
    `${JSON.stringify({ compilerOptions, files: ["consumer.ts"] }, null, 2)}\n`,
  );
  const tsc = createRequire(join(repoRoot, "package.json")).resolve("typescript/bin/tsc");
  const result = run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: projectDir });
  if (result.status !== 0) {
    problems.push(
      `a strict consumer (skipLibCheck: false, no @types of its own) importing every entry point does not compile:\n${tail(result.output, 25)}`,
    );
  }
}

/**
 * A clean machine's environment: the caller's PATH (for node and npm), an empty HOME, npm's
 * cache and the XDG folders inside the scratch folder, no npm_config_* of the caller (an
 * `npm run` sets its own prefix and cache there) except a registry it was told to use.
 */
function cleanMachineEnv(home) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_config_registry$/i.test(key)) env.npm_config_registry = value;
    if (/^npm_|^XDG_|^PNPM_|^NODE_OPTIONS$|^TMPDIR$/i.test(key)) continue;
    env[key] = value;
  }
  return {
    ...env,
    HOME: home,
    USERPROFILE: home,
    TMPDIR: join(scratch, "tmp"),
    npm_config_cache: join(scratch, "npm-cache"),
    npm_config_update_notifier: "false",
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    TURBO_TELEMETRY_DISABLED: "1",
    DO_NOT_TRACK: "1",
  };
}

/** The README's install: `npm install -g` of every tarball into a throwaway prefix, then the CLI from there. */
function checkGlobalInstall() {
  const home = join(scratch, "global-home");
  const prefix = join(scratch, "prefix");
  for (const dir of [home, prefix, join(scratch, "tmp")]) mkdirSync(dir, { recursive: true });
  const env = cleanMachineEnv(home);
  const tarballs = packed.map(({ tarball }) => tarball);
  const install = timed("npm install -g (empty cache)", () =>
    run("npm", ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", ...tarballs], {
      cwd: home,
      env,
    }),
  );
  if (install.status !== 0) {
    problems.push(`npm install -g --prefix ${prefix} of the tarballs failed:\n${tail(install.output)}`);
    return;
  }
  checkInstalledEngines(prefix, install.output);

  const bin = join(prefix, "bin", "podkit");
  const emptyCwd = (name) => {
    const dir = join(scratch, name);
    mkdirSync(dir);
    return dir;
  };
  const versionCwd = emptyCwd("cwd-version");
  const version = run(bin, ["--version"], { cwd: versionCwd, env });
  if (version.status !== 0 || version.stdout.trim() !== cli.version) {
    problems.push(
      `${bin} --version exited ${version.status} and printed ${JSON.stringify(version.stdout.trim())}, not ${cli.version}:\n${tail(version.output)}`,
    );
  }
  const demoCwd = emptyCwd("cwd-demo");
  const demo = timed("global podkit demo", () => run(bin, ["demo"], { cwd: demoCwd, env, timeout: 180_000 }));
  if (demo.status !== 0 || !/scripted/i.test(demo.output)) {
    problems.push(
      `${bin} demo (from an empty folder, empty HOME) exited ${demo.status}:\n${tail(demo.output)}`,
    );
  }
  for (const [dir, command] of [
    [versionCwd, "--version"],
    [demoCwd, "demo"],
  ]) {
    const left = readdirSync(dir);
    if (left.length > 0) problems.push(`podkit ${command} left ${left.join(", ")} in the folder it ran from`);
  }
}

/**
 * Every package the global install put down accepts the lowest Node the CLI claims (npm checks
 * each one's engines.node the same way and warns EBADENGINE). When this Node is itself inside the
 * CLI's range, npm's own output must carry no engine warning either.
 */
function checkInstalledEngines(prefix, npmOutput) {
  const claimed = JSON.parse(
    readFileSync(join(prefix, "lib", "node_modules", "@podkit", "cli", "package.json"), "utf8"),
  ).engines?.node;
  const lowest = claimed ? lowestVersion([claimed]) : null;
  if (!lowest) {
    problems.push(`the installed @podkit/cli has no usable engines.node (${JSON.stringify(claimed)})`);
    return;
  }
  for (const manifestPath of installedManifests(join(prefix, "lib", "node_modules"))) {
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    const range = manifest.engines?.node;
    if (typeof range === "string" && !satisfies(lowest, range)) {
      problems.push(
        `installing on Node ${formatVersion(lowest)} (the lowest the CLI's engines.node "${claimed}" allows) warns: ${manifest.name}@${manifest.version} requires Node "${range}"`,
      );
    }
  }
  if (!satisfies(process.version, claimed)) {
    notes.push(
      `npm's own engine warnings not checked: this is Node ${process.version}, below the CLI's ${formatVersion(lowest)}`,
    );
  } else if (/EBADENGINE|Unsupported engine/.test(npmOutput)) {
    problems.push(`npm install -g printed engine warnings on Node ${process.version}:\n${tail(npmOutput)}`);
  }
}

/** package.json of every installed package under a node_modules folder, nested ones included. */
function installedManifests(nodeModules) {
  const found = [];
  if (!existsSync(nodeModules)) return found;
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const dirs = entry.name.startsWith("@")
      ? readdirSync(join(nodeModules, entry.name)).map((name) => join(nodeModules, entry.name, name))
      : [join(nodeModules, entry.name)];
    for (const dir of dirs) {
      if (existsSync(join(dir, "package.json"))) found.push(join(dir, "package.json"));
      found.push(...installedManifests(join(dir, "node_modules")));
    }
  }
  return found;
}

if (problems.length > 0) {
  for (const problem of problems) console.log(`pack-smoke: ${problem}`);
  console.log(`pack-smoke: FAILED with ${problems.length} problem(s); scratch project kept at ${scratch}`);
  process.exitCode = 1;
} else {
  console.log(
    `pack-smoke: ok, ${packages.length} packages packed, installed from their tarballs in ${keep ? scratch : "a scratch project"} and imported; podkit --version, manifest show and demo ran there; a strict consumer compiled against the published types; npm install -g into a throwaway prefix on an empty HOME ran podkit --version and podkit demo (${timings.join(", ")})`,
  );
  for (const note of notes) console.log(`pack-smoke: note: ${note}`);
  if (!keep) rmSync(scratch, { recursive: true, force: true });
}
