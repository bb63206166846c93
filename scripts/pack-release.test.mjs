// The release artifacts: `npm run pack:release` packs every published package (built first by
// turbo's dependsOn) and prints the one npm command that installs the CLI from them.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { shownPath } from "./pack-release.mjs";
import { publishedPackages } from "./release-packages.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SCRIPT = fileURLToPath(new URL("./pack-release.mjs", import.meta.url));

const scratchDirs = [];
afterAll(() => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

describe("pack-release", () => {
  it("packs every published package, drops an earlier run's tarball, and prints the install command", () => {
    const out = mkdtempSync(join(tmpdir(), "podkit-pack-release-"));
    scratchDirs.push(out);
    writeFileSync(join(out, "podkit-cli-9.9.9.tgz"), "an earlier release");
    writeFileSync(join(out, "notes.txt"), "not ours");
    const run = spawnSync(process.execPath, [SCRIPT, "--out", out], { cwd: out, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);

    const names = publishedPackages(ROOT).map(({ manifest }) => manifest.name);
    const tarballs = readdirSync(out).filter((file) => file.endsWith(".tgz"));
    expect(tarballs).toHaveLength(names.length);
    expect(tarballs).not.toContain("podkit-cli-9.9.9.tgz");
    expect(existsSync(join(out, "notes.txt"))).toBe(true);

    const command = run.stdout.split("\n").find((line) => line.trim().startsWith("npm install -g "));
    expect(command?.trim().split(/\s+/).slice(3).sort()).toEqual(tarballs.map((file) => `./${file}`).sort());
    expect(run.stdout).toMatch(/with Node ≥ \d+\.\d+\.\d+ and npm/);
  });

  it("shows a tarball inside the folder as ./relative and one outside as absolute", () => {
    expect(shownPath("/repo/dist-release/podkit-cli-0.1.0.tgz", "/repo")).toBe(
      "./dist-release/podkit-cli-0.1.0.tgz",
    );
    expect(shownPath("/tmp/out/podkit-cli-0.1.0.tgz", "/repo")).toBe("/tmp/out/podkit-cli-0.1.0.tgz");
  });
});
