// `engines.node` tells the truth: each published package starts exactly at the lowest Node that
// everything it installs supports (per pnpm-lock.yaml), so installing it on that Node prints no
// EBADENGINE warning, and the README names the CLI's minimum.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  engineFindings,
  engineProblems,
  formatVersion,
  lowestVersion,
  productionClosure,
  readLockfile,
  satisfies,
} from "./node-engines.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const scratchDirs = [];
afterAll(() => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

// A lockfile in pnpm's format 9: the toolchain document first, then the project's; flow- and
// block-style engines; a peer suffix; a workspace link; dev and optional dependencies.
const LOCKFILE = `---
lockfileVersion: '9.0'

importers:

  .:
    dependencies:
      pnpm:
        specifier: 12.4.2
        version: 12.4.2

packages:

  pnpm@12.4.2:
    resolution: {integrity: sha512-x}
    engines: {node: '>=99'}

snapshots:

  pnpm@12.4.2: {}

---
lockfileVersion: '9.0'

importers:

  .:
    devDependencies:
      typescript:
        specifier: 5.9.3
        version: 5.9.3

  packages/app:
    dependencies:
      '@acme/lib':
        specifier: workspace:*
        version: link:../lib
      exporter:
        specifier: ^3.1.0
        version: 3.1.0(peer@1.0.0)
    devDependencies:
      testing-only:
        specifier: 1.0.0
        version: 1.0.0

  packages/lib:
    dependencies:
      plain:
        specifier: ^2.0.0
        version: 2.0.0
    optionalDependencies:
      native-extra:
        specifier: 1.0.0
        version: 1.0.0

packages:

  exporter@3.1.0:
    resolution: {integrity: sha512-x}
    engines: {node: '>=22.15.0'}
    peerDependencies:
      peer: ^1.0.0

  peer@1.0.0:
    resolution: {integrity: sha512-x}
    engines:
      node: ^20.19.0 || >=22.12.0

  plain@2.0.0:
    resolution: {integrity: sha512-x}

  testing-only@1.0.0:
    resolution: {integrity: sha512-x}
    engines: {node: '>=30'}

  native-extra@1.0.0:
    resolution: {integrity: sha512-x}
    engines: {node: '>=30'}

  typescript@5.9.3:
    resolution: {integrity: sha512-x}
    engines: {node: '>=14.17'}

snapshots:

  exporter@3.1.0(peer@1.0.0):
    dependencies:
      peer: 1.0.0
      plain: 2.0.0

  peer@1.0.0: {}

  plain@2.0.0: {}

  testing-only@1.0.0: {}

  native-extra@1.0.0: {}

  typescript@5.9.3: {}
`;

/** A repository with the lockfile above, a root floor of 20.19 and the given engines per package. */
function workspace({ app, lib }) {
  const root = mkdtempSync(join(tmpdir(), "podkit-node-engines-"));
  scratchDirs.push(root);
  writeFileSync(join(root, "pnpm-lock.yaml"), LOCKFILE);
  writeFileSync(join(root, "package.json"), JSON.stringify({ private: true, engines: { node: ">=20.19" } }));
  for (const [dir, name, node] of [
    ["app", "@acme/app", app],
    ["lib", "@acme/lib", lib],
  ]) {
    mkdirSync(join(root, "packages", dir), { recursive: true });
    writeFileSync(
      join(root, "packages", dir, "package.json"),
      JSON.stringify({ name, version: "0.1.0", engines: node ? { node } : undefined }),
    );
  }
  return root;
}

describe("node engines", () => {
  it("evaluates the range forms dependencies declare, as node-semver does for release versions", () => {
    const cases = [
      [">=18.*", "18.0.0", true],
      [">= 10.x", "10.0.0", true],
      [">= 0.4", "0.3.9", false],
      ["^20.19.0 || >=22.12.0", "20.18.3", false],
      ["^20.19.0 || >=22.12.0", "21.0.0", false],
      ["^20.19.0 || >=22.12.0", "22.12.0", true],
      ["18 || 20 || >=22", "20.99.1", true],
      ["18 || 20 || >=22", "21.5.0", false],
      [">=6 <7 || >=8", "7.1.0", false],
      ["^10 || ^12 || ^13.7 || ^14 || >=15.0.1", "13.6.0", false],
      ["^10 || ^12 || ^13.7 || ^14 || >=15.0.1", "13.7.0", true],
      ["~18.17", "18.18.0", false],
      [">18", "18.5.0", false],
      ["<=20", "20.9.0", true],
      ["1.2.3 - 2", "2.9.9", true],
      ["1.2.3 - 2", "3.0.0", false],
      ["*", "0.1.0", true],
    ];
    expect(cases.map(([range, version]) => [range, version, satisfies(version, range)])).toEqual(cases);
  });

  it("finds the lowest version in every range, or none", () => {
    expect(formatVersion(lowestVersion([">=20.19", "^20.19.0 || >=22.12.0", ">=22.15.0"]))).toBe("22.15.0");
    expect(formatVersion(lowestVersion([">=20.19", "18 || 20 || >=22"]))).toBe("20.19.0");
    expect(formatVersion(lowestVersion([">=18", ">18.4"]))).toBe("18.5.0");
    expect(lowestVersion([">=20.19", "<20"])).toBeNull();
  });

  it("reads the project's document of the lockfile and follows only what an install of the package installs", () => {
    const lock = readLockfile(LOCKFILE);
    expect(lock.engines.get("pnpm@12.4.2")).toBeUndefined();
    expect(lock.engines.get("peer@1.0.0")).toBe("^20.19.0 || >=22.12.0");
    const workspaceManifests = new Map([
      ["packages/lib", { name: "@acme/lib", version: "0.1.0", engines: { node: ">=20" } }],
    ]);
    expect(Object.fromEntries(productionClosure(lock, "packages/app", workspaceManifests))).toEqual({
      "@acme/lib@0.1.0": ">=20",
      "plain@2.0.0": undefined,
      "exporter@3.1.0": ">=22.15.0",
      "peer@1.0.0": "^20.19.0 || >=22.12.0",
    });
  });

  it("catches an engines.node below what a dependency needs, and one above it (positive control)", () => {
    const low = workspace({ app: ">=20.19", lib: ">=20.19" });
    expect(engineProblems(engineFindings(low))).toEqual([
      '@acme/app: engines.node ">=20.19" starts at 20.19.0, but the lowest Node everything it installs supports is 22.15.0 (required by exporter@3.1.0 (>=22.15.0)); set engines.node to ">=22.15.0"',
    ]);
    const high = workspace({ app: ">=22.15.0", lib: ">=22" });
    expect(engineProblems(engineFindings(high))).toEqual([
      '@acme/lib: engines.node ">=22" starts at 22.0.0, but the lowest Node everything it installs supports is 20.19.0 (the repository\'s floor); set engines.node to ">=20.19.0"',
    ]);
    const missing = workspace({ app: ">=22.15.0" });
    expect(engineProblems(engineFindings(missing))).toEqual([
      '@acme/lib: package.json has no engines.node; set ">=20.19.0"',
    ]);
    expect(engineProblems(engineFindings(workspace({ app: ">=22.15.0", lib: ">=20.19.0" })))).toEqual([]);
  });

  it("every published package's engines.node starts where everything it installs is supported", () => {
    const findings = engineFindings(ROOT);
    expect(findings.length).toBeGreaterThan(10);
    expect(findings.every(({ installs }) => installs >= 0)).toBe(true);
    expect(engineProblems(findings)).toEqual([]);
  });

  it("the README names the Node the CLI needs", () => {
    const cli = engineFindings(ROOT).find(({ name }) => name === "@podkit/cli");
    const [major, minor] = cli.declaredLowest;
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const says = new RegExp(`Node(?:\\.js)? (?:≥ ?|>= ?)${major}\\.${minor}\\b`).test(readme);
    expect(says, `README.md should say the CLI needs "Node.js ≥ ${major}.${minor}"`).toBe(true);
  });
});
