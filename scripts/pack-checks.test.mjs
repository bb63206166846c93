// The static checks of the pack smoke test, each shown catching its defect in a small unpacked
// package and staying quiet on the same package without it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  checkDependencies,
  checkEntryPoints,
  checkNoMonorepoPaths,
  checkNoWorkspaceRanges,
  checkPackedPackage,
  packageNameOf,
} from "./pack-checks.mjs";

const scratchDirs = [];
afterAll(() => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

const REPO_ROOT = "/work/some-checkout";

/** An unpacked tarball (`package/`) of a healthy package; `manifest` overrides fields, `files` adds or (null) deletes files. */
function packedPackage({ manifest = {}, files = {} } = {}) {
  const root = mkdtempSync(join(tmpdir(), "podkit-pack-checks-"));
  scratchDirs.push(root);
  const dir = join(root, "package");
  const content = {
    "package.json": JSON.stringify({
      name: "@podkit/example",
      version: "0.1.0",
      type: "module",
      main: "./dist/index.js",
      types: "./dist/index.d.ts",
      exports: {
        ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
        "./package.json": "./package.json",
      },
      bin: { example: "./dist/bin.js" },
      dependencies: { zod: "^4.1.0", "@podkit/manifest": "0.1.0" },
      ...manifest,
    }),
    "dist/index.js": [
      'import { z } from "zod";',
      'import { readFileSync } from "node:fs";',
      'export { loadManifest } from "@podkit/manifest";',
      'export * from "./inner/helper.js";',
      '// A template comment, not an import: {% import "ref" as macros %}',
      'export const PROMPTS = new URL("../resources/prompts/", import.meta.url);',
      "export const schema = z.string();",
    ].join("\n"),
    "dist/index.d.ts": 'export declare const schema: import("zod").ZodString;\n',
    "dist/inner/helper.js": 'export const name = "helper";\n',
    "dist/bin.js": '#!/usr/bin/env node\nimport "@podkit/example";\n',
    "dist/index.js.map": JSON.stringify({ version: 3, sources: ["../src/index.ts"], mappings: "" }),
    "resources/prompts/default.md": "You are a pod.\n",
    ...files,
  };
  for (const [file, text] of Object.entries(content)) {
    if (text === null) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

describe("pack checks", () => {
  it("find nothing wrong in a healthy packed package", () => {
    expect(checkPackedPackage(packedPackage(), REPO_ROOT)).toEqual([]);
  });

  it("refuse a workspace: range left in the packed manifest", () => {
    const dir = packedPackage({
      manifest: { dependencies: { zod: "^4.1.0", "@podkit/manifest": "workspace:*" } },
    });
    expect(checkNoWorkspaceRanges(dir)).toEqual([
      '@podkit/example: package.json dependencies.@podkit/manifest is still "workspace:*" after packing',
    ]);
  });

  it("refuse an entry point whose file is not in the tarball", () => {
    const dir = packedPackage({ files: { "dist/index.d.ts": null, "dist/bin.js": null } });
    expect(checkEntryPoints(dir)).toEqual([
      '@podkit/example: types points at ./dist/index.d.ts, which is not in the tarball (check "files")',
      '@podkit/example: exports["."]["types"] points at ./dist/index.d.ts, which is not in the tarball (check "files")',
      '@podkit/example: bin["example"] points at ./dist/bin.js, which is not in the tarball (check "files")',
    ]);
  });

  it("refuse a path into the monorepo: the checkout's absolute path, or a relative path climbing out", () => {
    const dir = packedPackage({
      files: {
        "dist/paths.js": [
          `export const ABSOLUTE = "${REPO_ROOT}/resources/prompts";`,
          'export const CLIMBING = new URL("../../../resources/prompts/", import.meta.url);',
        ].join("\n"),
      },
    });
    expect(checkNoMonorepoPaths(dir, REPO_ROOT)).toEqual([
      `@podkit/example: dist/paths.js contains the repository path ${REPO_ROOT}`,
      '@podkit/example: dist/paths.js refers to "../../../resources/prompts/", outside the package',
    ]);
  });

  it("refuse an import the manifest does not declare and a dependency nothing imports", () => {
    const dir = packedPackage({
      manifest: { dependencies: { zod: "^4.1.0", "@podkit/manifest": "0.1.0", uuid: "^11.1.0" } },
      files: { "dist/late.js": 'export const load = () => import("nunjucks/src/parser");\n' },
    });
    expect(checkDependencies(dir)).toEqual([
      "@podkit/example: dist/late.js imports nunjucks, which package.json does not declare in dependencies",
      "@podkit/example: dependency uuid is never imported by the packed code; remove it",
    ]);
  });

  it("names the package a specifier imports", () => {
    expect(packageNameOf("@ai-sdk/provider/internal")).toBe("@ai-sdk/provider");
    expect(packageNameOf("nunjucks/src/parser")).toBe("nunjucks");
    expect(packageNameOf("zod")).toBe("zod");
  });
});
