// The lockfile holds one copy of each package per major version: two patch or minor versions of
// the same major (the AI SDK's provider-utils, pinned exactly by each provider package) mean
// duplicated code and providers that behave differently. `pnpm dedupe` merges what ranges allow;
// the rest needs an override in pnpm-workspace.yaml.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * `name@version` keys of the lockfile's `packages:` section (of its last document: pnpm writes the
 * package manager's own dependencies as a document before the project's).
 */
function lockedPackages(lockfile) {
  const section =
    lockfile
      .split(/^packages:\n/m)
      .at(-1)
      ?.split(/^snapshots:\n/m)[0] ?? "";
  return [...section.matchAll(/^ {2}'?(@?[^@'\s]+)@([^':\s(]+)/gm)].map(([, name, version]) => ({
    name,
    version,
  }));
}

/** Packages resolved to more than one version of the same major, with those versions. */
function sameMajorDuplicates(lockfile) {
  const byMajor = new Map();
  for (const { name, version } of lockedPackages(lockfile)) {
    const key = `${name}@${version.split(".")[0]}`;
    byMajor.set(key, [...(byMajor.get(key) ?? []), version]);
  }
  return [...byMajor]
    .filter(([, versions]) => versions.length > 1)
    .map(([key, versions]) => `${key}: ${versions.join(", ")}`);
}

describe("the lockfile", () => {
  it("finds a same-major duplicate when there is one (positive control)", () => {
    const lockfile = [
      "packages:",
      "",
      "  '@ai-sdk/provider-utils@4.0.64':",
      "    resolution: {integrity: sha512-a}",
      "  '@ai-sdk/provider-utils@4.0.66':",
      "    resolution: {integrity: sha512-b}",
      "  picomatch@2.3.2:",
      "    resolution: {integrity: sha512-c}",
      "  picomatch@4.0.7:",
      "    resolution: {integrity: sha512-d}",
      "",
      "snapshots:",
      "",
      "  picomatch@4.0.6: {}",
    ].join("\n");
    expect(sameMajorDuplicates(lockfile)).toEqual(["@ai-sdk/provider-utils@4: 4.0.64, 4.0.66"]);
  });

  it("resolves no package to two versions of the same major", () => {
    const lockfile = readFileSync(new URL("../pnpm-lock.yaml", import.meta.url), "utf8");
    expect(lockedPackages(lockfile).length).toBeGreaterThan(100);
    expect(sameMajorDuplicates(lockfile)).toEqual([]);
  });
});
