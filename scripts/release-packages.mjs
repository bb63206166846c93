// The release artifacts: every published package packed with `pnpm pack` (which rewrites the
// `workspace:` ranges to the packages' versions), the way a registry would serve them. The CLI
// installs from these tarballs together (`npm install -g` of all of them): the @podkit packages
// are also the library users import, so each ships once instead of a second, bundled copy inside
// the CLI. Used by scripts/pack-release.mjs, scripts/install-cli.mjs and scripts/pack-smoke.mjs.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pnpmCommand, TOOL_ENV } from "./pnpm-command.mjs";

/** Published (non-private) packages under packages/: `{ dir, importer, manifest }`, by folder name. */
export function publishedPackages(repoRoot) {
  const packages = [];
  for (const dir of readdirSync(join(repoRoot, "packages")).sort()) {
    const manifestPath = join(repoRoot, "packages", dir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    if (!manifest.private)
      packages.push({ dir: join(repoRoot, "packages", dir), importer: `packages/${dir}`, manifest });
  }
  return packages;
}

function tail(text, lines = 15) {
  return text.trim().split("\n").slice(-lines).join("\n");
}

/**
 * Packs each package into `destination` (which must exist). Returns `{ packed, problems }`:
 * `packed` has `{ name, version, dir, tarball }` (tarball: absolute path) for each package packed;
 * `problems` one sentence per package that could not be (not built, pnpm pack failed).
 */
export function packPackages(packages, destination) {
  const [pnpm, pnpmPrefix] = pnpmCommand();
  const packed = [];
  const problems = [];
  for (const { dir, manifest } of packages) {
    if (!existsSync(join(dir, "dist"))) {
      problems.push(`${manifest.name}: dist/ is missing; build first (npm run setup, or pnpm build)`);
      continue;
    }
    const before = new Set(readdirSync(destination));
    const result = spawnSync(pnpm, [...pnpmPrefix, "pack", "--pack-destination", destination], {
      cwd: dir,
      encoding: "utf8",
      env: TOOL_ENV,
    });
    const tarball = readdirSync(destination).find((file) => !before.has(file) && file.endsWith(".tgz"));
    if (result.status !== 0 || !tarball) {
      const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error?.message ?? ""}`;
      problems.push(`${manifest.name}: pnpm pack failed:\n${tail(output)}`);
      continue;
    }
    packed.push({ name: manifest.name, version: manifest.version, dir, tarball: join(destination, tarball) });
  }
  return { packed, problems };
}
