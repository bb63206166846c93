#!/usr/bin/env node
// Puts `podkit` on the PATH from a clone: set-up (install, build; quick when done), the release
// tarballs (scripts/pack-release.mjs, into dist-release/), then `npm install -g` of all of them,
// exactly what a user does with the release artifacts. The prefix is npm's global one, or
// --prefix <dir> (or npm_config_prefix) for a user-owned folder such as ~/.local.
//   npm run install-cli [-- --prefix <dir>]
import { spawnSync } from "node:child_process";
import { delimiter, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { satisfies } from "./node-engines.mjs";
import { packRelease } from "./pack-release.mjs";
import { setup } from "./setup.mjs";

const say = (text) => console.error(`install-cli: ${text}`);

const { values } = parseArgs({ options: { prefix: { type: "string" } } });
const prefixArgs = values.prefix ? ["--prefix", resolve(values.prefix)] : [];

if (!(await setup())) process.exit(1);

const { packed, problems, nodeMinimum } = packRelease();
if (problems.length > 0) {
  for (const problem of problems) say(problem);
  process.exit(1);
}
say(`${packed.length} packages packed into dist-release/`);
if (nodeMinimum && !satisfies(process.version, `>=${nodeMinimum}`)) {
  say(`this is Node ${process.version}; the CLI needs Node ≥ ${nodeMinimum}, so npm will warn (EBADENGINE)`);
}

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const tarballs = packed.map(({ tarball }) => tarball);
say(`npm install -g ${prefixArgs.join(" ")}${prefixArgs.length ? " " : ""}<${tarballs.length} tarballs>`);
const install = spawnSync(npm, ["install", "-g", ...prefixArgs, "--no-audit", "--no-fund", ...tarballs], {
  stdio: "inherit",
  shell: process.platform === "win32",
});
if (install.status !== 0) {
  say(`npm install -g failed (exit ${install.status ?? install.error?.message}).`);
  say(
    "hint: without write access to npm's global prefix, install into your own: npm run install-cli -- --prefix ~/.local",
  );
  process.exit(1);
}

const prefix =
  values.prefix !== undefined
    ? resolve(values.prefix)
    : spawnSync(npm, ["prefix", "-g"], {
        encoding: "utf8",
        shell: process.platform === "win32",
      }).stdout.trim();
const binDir = process.platform === "win32" ? prefix : join(prefix, "bin");
const podkit = join(binDir, process.platform === "win32" ? "podkit.cmd" : "podkit");
const version = spawnSync(podkit, ["--version"], { encoding: "utf8", shell: process.platform === "win32" });
if (version.status !== 0) {
  say(`installed, but ${podkit} --version failed:\n${version.stderr ?? version.error?.message}`);
  process.exit(1);
}
say(`podkit ${version.stdout.trim()} installed: ${podkit}`);
const onPath = (process.env.PATH ?? "")
  .split(delimiter)
  .some((dir) => dir && resolve(dir) === resolve(binDir));
if (!onPath) say(`${binDir} is not on your PATH; add it, e.g. export PATH="${binDir}:$PATH"`);
say(
  `uninstall: npm uninstall -g ${prefixArgs.join(" ")}${prefixArgs.length ? " " : ""}${packed.map(({ name }) => name).join(" ")}`,
);
