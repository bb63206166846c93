#!/usr/bin/env node
// Release rehearsal: `changeset version` then `pnpm -r publish --dry-run`, in a throwaway copy of
// the working tree (changeset version rewrites every package.json and CHANGELOG.md and deletes the
// changesets; the real tree is never touched). The copy holds the files git knows (tracked, and
// untracked but not ignored) plus each package's built dist/ when present, and gets its workspace
// links from pnpm's store (`pnpm publish` resolves `workspace:` ranges through them).
// Checks that every published package gets one new version (the fixed group), a CHANGELOG.md
// entry, that no changeset is left unconsumed, and that pnpm would publish exactly the published
// packages at that version. Prints "publish-dry-run: ok ..." or one line per problem and exits 1.
//   node scripts/publish-dry-run.mjs [--keep]
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { pnpmCommand, TOOL_ENV } from "./pnpm-command.mjs";
import { publishedPackages } from "./release-packages.mjs";

const repoRoot = fileURLToPath(new URL("..", import.meta.url)).replace(/[\\/]$/, "");
const keep = process.argv.includes("--keep");
const problems = [];
const [pnpm, pnpmPrefix] = pnpmCommand();

function run(cmd, args, options) {
  const result = spawnSync(cmd, args, {
    encoding: "utf8",
    env: TOOL_ENV,
    maxBuffer: 64 * 1024 * 1024,
    ...options,
  });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ? result.error.message : ""}`;
  return { status: result.status ?? 1, stdout: result.stdout ?? "", output: output.trim() };
}

function tail(text, lines = 20) {
  return text.split("\n").slice(-lines).join("\n");
}

function finish() {
  if (problems.length > 0) {
    for (const problem of problems) console.log(`publish-dry-run: ${problem}`);
    console.log(`publish-dry-run: FAILED with ${problems.length} problem(s); the copy is kept at ${copy}`);
    process.exit(1);
  }
}

const copy = mkdtempSync(join(tmpdir(), "podkit-publish-dry-run-"));

// The working tree as a clean clone would have it, plus the builds.
const listed = run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
  cwd: repoRoot,
});
if (listed.status !== 0) {
  problems.push(`git ls-files failed (is ${repoRoot} a git checkout?):\n${tail(listed.output)}`);
  finish();
}
for (const file of listed.stdout.split("\0").filter(Boolean)) {
  if (!existsSync(join(repoRoot, file))) continue; // deleted in the working tree
  mkdirSync(dirname(join(copy, file)), { recursive: true });
  cpSync(join(repoRoot, file), join(copy, file));
}
const published = publishedPackages(repoRoot);
for (const { importer } of published) {
  for (const built of ["dist", "resources"]) {
    const from = join(repoRoot, importer, built);
    if (existsSync(from) && !existsSync(join(copy, importer, built)))
      cpSync(from, join(copy, importer, built), { recursive: true });
  }
}

// Links only: no lifecycle scripts (node-pty's native build), from the store `npm test` filled.
let install = run(
  pnpm,
  [...pnpmPrefix, "install", "--frozen-lockfile", "--offline", "--ignore-scripts", "--reporter=append-only"],
  {
    cwd: copy,
  },
);
if (install.status !== 0) {
  install = run(
    pnpm,
    [
      ...pnpmPrefix,
      "install",
      "--frozen-lockfile",
      "--prefer-offline",
      "--ignore-scripts",
      "--reporter=append-only",
    ],
    {
      cwd: copy,
    },
  );
}
if (install.status !== 0) {
  problems.push(`pnpm install in the copy failed:\n${tail(install.output)}`);
  finish();
}

const before = new Map(published.map(({ manifest }) => [manifest.name, manifest.version]));
const changesets = readdirSync(join(copy, ".changeset")).filter(
  (file) => file.endsWith(".md") && file !== "README.md",
);
const changesetBin = createRequire(join(repoRoot, "package.json")).resolve("@changesets/cli/bin.js");
const versioned = run(process.execPath, [changesetBin, "version"], { cwd: copy });
if (versioned.status !== 0) {
  problems.push(`changeset version failed:\n${tail(versioned.output)}`);
  finish();
}

const after = publishedPackages(copy);
const versions = new Set(after.map(({ manifest }) => manifest.version));
if (versions.size !== 1) {
  problems.push(
    `changeset version left the fixed group on several versions: ${after.map(({ manifest }) => `${manifest.name}@${manifest.version}`).join(", ")}`,
  );
}
const [version] = versions;
for (const { importer, manifest } of after) {
  if (changesets.length > 0 && manifest.version === before.get(manifest.name)) {
    problems.push(`${manifest.name}: changeset version left it at ${manifest.version}`);
  }
  const changelog = join(copy, importer, "CHANGELOG.md");
  if (
    changesets.length > 0 &&
    (!existsSync(changelog) || !readFileSync(changelog, "utf8").includes(`## ${manifest.version}`))
  ) {
    problems.push(`${manifest.name}: ${importer}/CHANGELOG.md has no "## ${manifest.version}" entry`);
  }
}
const left = readdirSync(join(copy, ".changeset")).filter(
  (file) => file.endsWith(".md") && file !== "README.md",
);
if (left.length > 0) problems.push(`changeset version left ${left.join(", ")} unconsumed`);

// --no-git-checks: the copy is no git checkout (and a release branch's state is not this check's business).
const publish = run(pnpm, [...pnpmPrefix, "-r", "publish", "--dry-run", "--no-git-checks"], { cwd: copy });
if (publish.status !== 0) problems.push(`pnpm -r publish --dry-run failed:\n${tail(publish.output)}`);
const wouldPublish = [...publish.output.matchAll(/📦 (\S+)@(\S+) →/g)]
  .map(([, name, at]) => `${name}@${at}`)
  .sort();
const expected = after.map(({ manifest }) => `${manifest.name}@${manifest.version}`).sort();
if (publish.status === 0 && wouldPublish.join(" ") !== expected.join(" ")) {
  problems.push(
    `pnpm would publish ${wouldPublish.join(", ") || "nothing"}; expected ${expected.join(", ")}`,
  );
}

finish();
console.log(
  `publish-dry-run: ok, changeset version consumed ${changesets.length} changesets and moved ${after.length} packages to ${version}; pnpm -r publish --dry-run would publish each`,
);
if (keep) console.log(`publish-dry-run: the copy is at ${copy}`);
else rmSync(copy, { recursive: true, force: true });
