#!/usr/bin/env node
// The release artifacts: packs every published package into dist-release/ (or --out <dir>) with
// `pnpm pack` and prints the one command that installs the CLI from them on a machine with only
// Node and npm. Needs built packages (npm run setup).
//   node scripts/pack-release.mjs [--out <dir>]
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { formatVersion, lowestVersion } from "./node-engines.mjs";
import { packPackages, publishedPackages } from "./release-packages.mjs";

export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
export const DEFAULT_OUT = join(REPO_ROOT, "dist-release");

/** How a user types a tarball's path from `cwd`: ./relative inside it, absolute outside. */
export function shownPath(path, cwd = process.cwd()) {
  const rel = relative(cwd, path);
  return rel.startsWith("..") || isAbsolute(rel) ? path : `./${rel}`;
}

/**
 * Packs every published package into `outDir`, after removing the tarballs an earlier run left
 * there (another version's would be installed alongside). Returns `{ packed, problems }` as
 * packPackages does, and `nodeMinimum`, the lowest Node the CLI's engines.node allows.
 */
export function packRelease(outDir = DEFAULT_OUT) {
  mkdirSync(outDir, { recursive: true });
  for (const file of readdirSync(outDir)) {
    if (/^podkit-.*\.tgz$/.test(file)) rmSync(join(outDir, file));
  }
  const packages = publishedPackages(REPO_ROOT);
  const result = packPackages(packages, outDir);
  const cli = packages.find(({ manifest }) => manifest.name === "@podkit/cli")?.manifest;
  const lowest = cli?.engines?.node ? lowestVersion([cli.engines.node]) : null;
  return { ...result, nodeMinimum: lowest ? formatVersion(lowest) : null };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  const outDir = values.out ? resolve(values.out) : DEFAULT_OUT;
  const { packed, problems, nodeMinimum } = packRelease(outDir);
  if (problems.length > 0) {
    for (const problem of problems) console.error(`pack-release: ${problem}`);
    process.exit(1);
  }
  console.log(
    `pack-release: ${packed.length} packages (version ${packed[0]?.version}) packed into ${shownPath(outDir)}`,
  );
  console.log(
    `Install the CLI with Node ≥ ${nodeMinimum} and npm (the tarballs can be copied anywhere first):`,
  );
  console.log(`  npm install -g ${packed.map(({ tarball }) => shownPath(tarball)).join(" ")}`);
}
