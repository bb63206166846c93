// The static checks of the pack smoke test, each shown catching its defect in a small unpacked
// package and staying quiet on the same package without it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  checkDependencies,
  checkEntryPoints,
  checkManifestFields,
  checkNoMonorepoPaths,
  checkNoWorkspaceRanges,
  checkPackedPackage,
  checkTypeDependencies,
  packageNameOf,
  reachableDeclarations,
  usesNodeTypes,
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
      description: "An example package",
      license: "Apache-2.0",
      repository: {
        type: "git",
        url: "git+https://github.com/podkit/podkit.git",
        directory: "packages/example",
      },
      publishConfig: { access: "public" },
      type: "module",
      main: "./dist/index.js",
      types: "./dist/index.d.ts",
      exports: {
        ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
        "./package.json": "./package.json",
      },
      bin: { example: "./dist/bin.js" },
      files: ["dist", "!dist/.tsbuildinfo", "resources"],
      dependencies: { zod: "^4.1.0", "@podkit/manifest": "0.1.0" },
      engines: { node: ">=20.19" },
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
    LICENSE: "Apache License, Version 2.0\n",
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
    expect(checkPackedPackage(packedPackage(), REPO_ROOT, "packages/example")).toEqual([]);
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

  it("refuse a manifest without the fields a registry user relies on", () => {
    const dir = packedPackage({
      manifest: {
        description: "",
        repository: "github:podkit/podkit",
        publishConfig: undefined,
        engines: { node: "soon" },
        files: undefined,
      },
      files: { LICENSE: null, "dist/.tsbuildinfo": "{}" },
    });
    expect(checkManifestFields(dir, "packages/example")).toEqual([
      "@podkit/example: package.json has no description (the registry's search shows it)",
      "@podkit/example: the tarball has no LICENSE file (pnpm pack copies the workspace root's)",
      "@podkit/example: package.json has no repository { type, url, directory }",
      '@podkit/example: publishConfig.access is not "public"; a scoped package would publish as restricted',
      '@podkit/example: engines.node is "soon"; give the lowest Node it supports',
      '@podkit/example: package.json has no "files" list; everything not ignored would be published',
      '@podkit/example: dist/.tsbuildinfo (tsc\'s build state) is in the tarball; exclude it in "files" ("!dist/.tsbuildinfo")',
    ]);
  });

  it("refuse a repository without the package's folder, and exports TypeScript would misread", () => {
    const dir = packedPackage({
      manifest: {
        license: "UNLICENSED",
        repository: { type: "git", url: "git+https://github.com/podkit/podkit.git" },
        types: "./dist/other.d.ts",
        exports: { ".": { default: "./dist/index.js", types: "./dist/index.d.ts" } },
      },
    });
    expect(checkManifestFields(dir, "packages/example")).toEqual([
      '@podkit/example: package.json license is "UNLICENSED"; give an SPDX identifier',
      "@podkit/example: repository.directory is undefined, but the package lives in packages/example",
      '@podkit/example: exports["."] must list "types" first, then "default" (it lists ["default","types"])',
      '@podkit/example: exports has no "./package.json" (tools read it through the package name)',
      '@podkit/example: "types" (./dist/other.d.ts) differs from exports["."].types (./dist/index.d.ts)',
    ]);
  });

  it("follow the declarations a consumer reads, from the exported types through relative imports", () => {
    const dir = packedPackage({
      files: {
        "dist/index.d.ts": 'export * from "./inner/api.js";\nexport type { Row } from "./rows";\n',
        "dist/inner/api.d.ts":
          'import type { Options } from "../options.js";\nexport declare function open(o: Options): void;\n',
        "dist/options.d.ts": "export interface Options { path: string }\n",
        "dist/rows/index.d.ts": "export interface Row { id: string }\n",
        "dist/internal-only.d.ts": 'import type pg from "pg";\nexport declare const pool: pg.Pool;\n',
      },
    });
    expect(reachableDeclarations(dir).map((file) => file.slice(dir.length + 1))).toEqual([
      "dist/index.d.ts",
      "dist/inner/api.d.ts",
      "dist/options.d.ts",
      "dist/rows/index.d.ts",
    ]);
  });

  it("tell declarations that need Node's types from those that do not", () => {
    expect(usesNodeTypes('import type { Stats } from "node:fs";\nexport declare const s: Stats;')).toBe(true);
    expect(usesNodeTypes("export declare function encode(text: string): Buffer;")).toBe(true);
    expect(usesNodeTypes("export interface Io { out: NodeJS.WritableStream }")).toBe(true);
    expect(usesNodeTypes('/// <reference types="node" />\nexport {};')).toBe(true);
    // Prose about a Buffer in a doc comment, and Web types, need nothing from Node.
    expect(
      usesNodeTypes(
        "/** Returns a Buffer-like view. */\nexport declare function view(s: AbortSignal): Uint8Array;",
      ),
    ).toBe(false);
  });

  it("refuse declarations whose type packages are not dependencies, and type packages nothing needs", () => {
    const dir = packedPackage({
      manifest: {
        dependencies: {
          zod: "^4.1.0",
          "@podkit/manifest": "0.1.0",
          "@ai-sdk/provider": "3.0.19",
          "@types/picomatch": "^4.0.3",
        },
        devDependencies: { "@types/pg": "^8.15.0" },
      },
      files: {
        "dist/index.d.ts": [
          'import type { Stats } from "node:fs";',
          'import type pg from "pg";',
          'import type { LanguageModelV3 } from "@ai-sdk/provider";',
          "export declare function open(pool: pg.Pool, model: LanguageModelV3): Stats;",
        ].join("\n"),
      },
    });
    expect(checkTypeDependencies(dir)).toEqual([
      "@podkit/example: dist/index.d.ts needs @types/node, which is not in dependencies; a consumer's tsc with skipLibCheck: false fails without it",
      "@podkit/example: dist/index.d.ts needs @types/pg, which is not in dependencies; a consumer's tsc with skipLibCheck: false fails without it",
      "@podkit/example: dist/index.d.ts needs @types/json-schema, which is not in dependencies; a consumer's tsc with skipLibCheck: false fails without it",
      "@podkit/example: dependency @types/picomatch is needed by no published declaration; move it to devDependencies",
    ]);
    const fixed = packedPackage({
      manifest: {
        dependencies: {
          "@ai-sdk/provider": "3.0.19",
          "@types/json-schema": "^7.0.15",
          "@types/node": "*",
          "@types/pg": "^8.15.0",
        },
      },
      files: {
        "dist/index.d.ts": [
          'import type { Stats } from "node:fs";',
          'import type pg from "pg";',
          'import type { LanguageModelV3 } from "@ai-sdk/provider";',
          "export declare function open(pool: pg.Pool, model: LanguageModelV3): Stats;",
        ].join("\n"),
      },
    });
    expect(checkTypeDependencies(fixed)).toEqual([]);
  });

  it("names the package a specifier imports", () => {
    expect(packageNameOf("@ai-sdk/provider/internal")).toBe("@ai-sdk/provider");
    expect(packageNameOf("nunjucks/src/parser")).toBe("nunjucks");
    expect(packageNameOf("zod")).toBe("zod");
  });
});
