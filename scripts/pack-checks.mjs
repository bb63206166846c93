// Static checks of one packed package (the `package/` folder of its tarball), run by
// scripts/pack-smoke.mjs before the tarballs are installed anywhere. Each returns a list of
// problems, one sentence each naming the package and the file.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { lowestVersion } from "./node-engines.mjs";

const DEPENDENCY_FIELDS = ["dependencies", "peerDependencies", "optionalDependencies"];
const TEXT_FILE = /\.(?:[cm]?js|d\.[cm]?ts|json|map|md|toml|txt)$/;
const CODE_FILE = /\.(?:[cm]?js|d\.[cm]?ts)$/;
// A relative path literal that may climb out of the package ("../..", "../../resources/x").
const RELATIVE_PATH = /["'`]((?:\.\.\/)+[^"'`\s]*)["'`]/g;

function listFiles(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...listFiles(path));
    else files.push(path);
  }
  return files;
}

function readManifest(packageDir) {
  return JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
}

function isInside(root, path) {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep));
}

/** The package name a bare specifier imports: "@scope/name/deep" → "@scope/name", "name/deep" → "name". */
export function packageNameOf(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** A `workspace:` range left in the packed manifest cannot be installed from a registry. */
export function checkNoWorkspaceRanges(packageDir) {
  const manifest = readManifest(packageDir);
  const problems = [];
  for (const field of [...DEPENDENCY_FIELDS, "devDependencies"]) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (String(range).startsWith("workspace:")) {
        problems.push(`${manifest.name}: package.json ${field}.${name} is still "${range}" after packing`);
      }
    }
  }
  return problems;
}

function entryTargets(manifest) {
  const targets = [];
  const walk = (value, where) => {
    if (typeof value === "string") targets.push([where, value]);
    else if (value && typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) walk(inner, `${where}["${key}"]`);
    }
  };
  walk(manifest.main, "main");
  walk(manifest.types, "types");
  walk(manifest.exports, "exports");
  walk(typeof manifest.bin === "string" ? { [manifest.name]: manifest.bin } : manifest.bin, "bin");
  return targets;
}

/** Every file package.json points at (main, types, exports, bin) is in the tarball. */
export function checkEntryPoints(packageDir) {
  const manifest = readManifest(packageDir);
  const problems = [];
  for (const [where, target] of entryTargets(manifest)) {
    if (target.includes("*")) continue;
    const path = resolve(packageDir, target);
    let exists = false;
    try {
      exists = statSync(path).isFile();
    } catch {}
    if (!exists || !isInside(packageDir, path)) {
      problems.push(
        `${manifest.name}: ${where} points at ${target}, which is not in the tarball (check "files")`,
      );
    }
  }
  return problems;
}

/** No file mentions the repository's absolute path or a relative path that climbs out of the package. */
export function checkNoMonorepoPaths(packageDir, repoRoot) {
  const manifest = readManifest(packageDir);
  const problems = [];
  const root = repoRoot.replace(/[\\/]+$/, "");
  for (const file of listFiles(packageDir)) {
    if (!TEXT_FILE.test(file)) continue;
    const text = readFileSync(file, "utf8");
    const shown = relative(packageDir, file);
    if (text.includes(root)) problems.push(`${manifest.name}: ${shown} contains the repository path ${root}`);
    for (const match of text.matchAll(RELATIVE_PATH)) {
      if (!isInside(packageDir, resolve(dirname(file), match[1]))) {
        problems.push(`${manifest.name}: ${shown} refers to "${match[1]}", outside the package`);
      }
    }
  }
  return problems;
}

/** The packages the emitted code and declarations import, by name, with one file each for the message. */
export function importedPackages(packageDir) {
  const imported = new Map();
  for (const file of listFiles(packageDir)) {
    if (!CODE_FILE.test(file) || file.includes(`${sep}node_modules${sep}`)) continue;
    // TypeScript's scanner finds import/export-from, import(), require() and import("x") types,
    // and skips comments and strings, which mention template `import "x"` syntax in this repo.
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (specifier.startsWith(".") || specifier.startsWith("/") || isBuiltin(specifier)) continue;
      const name = packageNameOf(specifier);
      if (!imported.has(name)) imported.set(name, relative(packageDir, file));
    }
  }
  return imported;
}

/**
 * Every package the code imports is declared (else the install lacks it), and every declared
 * runtime dependency is imported somewhere (else every user installs it for nothing). Type
 * packages (`@types/*`) are checked against the declarations by checkTypeDependencies.
 */
export function checkDependencies(packageDir) {
  const manifest = readManifest(packageDir);
  const declared = new Set(DEPENDENCY_FIELDS.flatMap((field) => Object.keys(manifest[field] ?? {})));
  const imported = importedPackages(packageDir);
  const problems = [];
  for (const [name, file] of imported) {
    if (name !== manifest.name && !declared.has(name)) {
      problems.push(
        `${manifest.name}: ${file} imports ${name}, which package.json does not declare in dependencies`,
      );
    }
  }
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (!name.startsWith("@types/") && !imported.has(name)) {
      problems.push(`${manifest.name}: dependency ${name} is never imported by the packed code; remove it`);
    }
  }
  return problems;
}

/** The declaration file a relative specifier of a .d.ts means ("./x.js" → x.d.ts, "./dir" → dir/index.d.ts). */
function declarationFor(fromFile, specifier) {
  const base = resolve(dirname(fromFile), specifier);
  const stem = base.replace(/\.(?:[cm]?js|d\.[cm]?ts|[cm]?ts)$/, "");
  const candidates = [`${stem}.d.ts`, `${stem}.d.mts`, `${stem}.d.cts`, join(base, "index.d.ts")];
  return candidates.find((file) => existsSync(file) && statSync(file).isFile());
}

/**
 * The declaration files a consumer's tsc reads: those the `types` conditions of `exports` (and
 * `types`) point at, and everything they import relatively. Shipped declarations nothing
 * reaches (an internal module) never reach a consumer.
 */
export function reachableDeclarations(packageDir) {
  const manifest = readManifest(packageDir);
  const queue = entryTargets(manifest)
    .filter(([where, target]) => /\.d\.[cm]?ts$/.test(target) && !where.startsWith("bin"))
    .map(([, target]) => resolve(packageDir, target))
    .filter((file) => existsSync(file));
  const seen = new Set();
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    const { importedFiles, referencedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    for (const { fileName } of [...importedFiles, ...referencedFiles]) {
      if (!fileName.startsWith(".")) continue;
      const target = declarationFor(file, fileName);
      if (target && isInside(packageDir, target)) queue.push(target);
    }
  }
  return [...seen].sort();
}

/** Whether a declaration file needs Node's types: a builtin module, `/// <reference types="node" />`, Buffer or NodeJS.*. */
export function usesNodeTypes(text, fileName = "index.d.ts") {
  const { importedFiles, typeReferenceDirectives } = ts.preProcessFile(text, true, true);
  if (importedFiles.some(({ fileName: specifier }) => isBuiltin(specifier))) return true;
  if (typeReferenceDirectives.some(({ fileName: name }) => name === "node")) return true;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  let found = false;
  const visit = (node) => {
    if (found) return;
    if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
      const name = (ts.isTypeReferenceNode(node) ? node.typeName : node.expression).getText(source);
      if (name === "Buffer" || name.startsWith("NodeJS.")) found = true;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

// A type package a dependency's declarations need but that dependency forgot to declare: we declare
// it for our consumers while the dependency does not. Key: the @types package; value: the
// dependency whose declarations need it.
const TYPES_FOR_DEPENDENCIES = {
  // @ai-sdk/provider's index.d.ts imports json-schema, whose types it lists only as a devDependency
  // (vercel/ai#15874): a consumer's tsc with skipLibCheck: false fails with TS7016 without it.
  "@types/json-schema": "@ai-sdk/provider",
};

/**
 * The published declarations stand alone: a consumer's tsc with `skipLibCheck: false` gets every
 * type package they need from `dependencies` (the TypeScript handbook's rule for declaration
 * dependencies), and no `@types/*` dependency is there for nothing.
 *   - declarations that use Node's types need `@types/node` in dependencies;
 *   - declarations that import `x` need `@types/x` when the package declares it at all
 *     (a devDependency `@types/x` means x ships no types of its own);
 *   - an `@types/*` dependency no reachable declaration needs belongs in devDependencies.
 */
export function checkTypeDependencies(packageDir) {
  const manifest = readManifest(packageDir);
  const dependencies = manifest.dependencies ?? {};
  const devDependencies = manifest.devDependencies ?? {};
  const needed = new Map();
  for (const file of reachableDeclarations(packageDir)) {
    const text = readFileSync(file, "utf8");
    const shown = relative(packageDir, file);
    if (usesNodeTypes(text, file) && !needed.has("@types/node")) needed.set("@types/node", shown);
    for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
      if (specifier.startsWith(".") || isBuiltin(specifier)) continue;
      const name = packageNameOf(specifier);
      const typesName = name.startsWith("@")
        ? `@types/${name.slice(1).replace("/", "__")}`
        : `@types/${name}`;
      if ((typesName in dependencies || typesName in devDependencies) && !needed.has(typesName)) {
        needed.set(typesName, shown);
      }
      for (const [types, dependency] of Object.entries(TYPES_FOR_DEPENDENCIES)) {
        if (dependency === name && !needed.has(types)) needed.set(types, shown);
      }
    }
  }
  const problems = [];
  for (const [types, file] of needed) {
    if (!(types in dependencies)) {
      problems.push(
        `${manifest.name}: ${file} needs ${types}, which is not in dependencies; a consumer's tsc with skipLibCheck: false fails without it`,
      );
    }
  }
  for (const name of Object.keys(dependencies)) {
    if (name.startsWith("@types/") && !needed.has(name)) {
      problems.push(
        `${manifest.name}: dependency ${name} is needed by no published declaration; move it to devDependencies`,
      );
    }
  }
  return problems;
}

const SPDX_UNPUBLISHABLE = new Set(["UNLICENSED", "SEE LICENSE IN LICENSE"]);

/**
 * The manifest fields a registry user relies on: a description, a license with its text in the
 * tarball, the repository and the package's folder in it, public access (a scoped package is
 * otherwise published restricted, or refused), a readable `engines.node`, a `files` list, and
 * `exports` whose "." entry gives TypeScript its types first and matches `main`/`types`.
 * `expectedDirectory` is the package's folder in the repository ("packages/cli").
 */
export function checkManifestFields(packageDir, expectedDirectory) {
  const manifest = readManifest(packageDir);
  const name = manifest.name;
  const problems = [];
  if (typeof manifest.description !== "string" || manifest.description.trim() === "") {
    problems.push(`${name}: package.json has no description (the registry's search shows it)`);
  }
  if (typeof manifest.license !== "string" || SPDX_UNPUBLISHABLE.has(manifest.license)) {
    problems.push(
      `${name}: package.json license is ${JSON.stringify(manifest.license)}; give an SPDX identifier`,
    );
  } else if (!readdirSync(packageDir).some((file) => /^licen[cs]e(?:\.|$)/i.test(file))) {
    problems.push(`${name}: the tarball has no LICENSE file (pnpm pack copies the workspace root's)`);
  }
  const repository = manifest.repository;
  if (typeof repository !== "object" || repository === null || typeof repository.url !== "string") {
    problems.push(`${name}: package.json has no repository { type, url, directory }`);
  } else {
    if (repository.type !== "git" || !/^git\+https:\/\/|^https:\/\//.test(repository.url)) {
      problems.push(
        `${name}: repository should be { "type": "git", "url": "git+https://…" }, not ${JSON.stringify(repository)}`,
      );
    }
    if (expectedDirectory && repository.directory !== expectedDirectory) {
      problems.push(
        `${name}: repository.directory is ${JSON.stringify(repository.directory)}, but the package lives in ${expectedDirectory}`,
      );
    }
  }
  if (manifest.publishConfig?.access !== "public") {
    problems.push(
      `${name}: publishConfig.access is not "public"; a scoped package would publish as restricted`,
    );
  }
  const node = manifest.engines?.node;
  let lowest = null;
  try {
    lowest = node ? lowestVersion([node]) : null;
  } catch {}
  if (!lowest)
    problems.push(`${name}: engines.node is ${JSON.stringify(node)}; give the lowest Node it supports`);
  if (!Array.isArray(manifest.files) || manifest.files.length === 0) {
    problems.push(`${name}: package.json has no "files" list; everything not ignored would be published`);
  }
  const leftovers = listFiles(packageDir)
    .map((file) => relative(packageDir, file))
    .filter((file) => file.endsWith(".tsbuildinfo"));
  for (const file of leftovers) {
    problems.push(
      `${name}: ${file} (tsc's build state) is in the tarball; exclude it in "files" ("!${file}")`,
    );
  }
  problems.push(...checkExportsShape(manifest));
  return problems;
}

function checkExportsShape(manifest) {
  const name = manifest.name;
  const exportsField = manifest.exports;
  if (typeof exportsField !== "object" || exportsField === null || !exportsField["."]) {
    return [`${name}: package.json has no exports["."]; give the entry point with its types`];
  }
  const problems = [];
  for (const [subpath, target] of Object.entries(exportsField)) {
    if (subpath === "./package.json") continue;
    const conditions = typeof target === "object" && target !== null ? Object.keys(target) : [];
    // TypeScript takes the first condition that matches: "types" after "default" is never read.
    if (conditions[0] !== "types") {
      problems.push(
        `${name}: exports["${subpath}"] must list "types" first, then "default" (it lists ${JSON.stringify(conditions)})`,
      );
    } else if (!/\.d\.[cm]?ts$/.test(target.types)) {
      problems.push(`${name}: exports["${subpath}"].types is ${target.types}, not a .d.ts file`);
    }
  }
  if (!("./package.json" in exportsField)) {
    problems.push(`${name}: exports has no "./package.json" (tools read it through the package name)`);
  }
  const root = exportsField["."];
  if (typeof root === "object" && root !== null) {
    if (manifest.types !== root.types) {
      problems.push(`${name}: "types" (${manifest.types}) differs from exports["."].types (${root.types})`);
    }
    if (manifest.main !== undefined && manifest.main !== root.default) {
      problems.push(`${name}: "main" (${manifest.main}) differs from exports["."].default (${root.default})`);
    }
  }
  return problems;
}

/** All static checks of one unpacked package; `expectedDirectory` is its folder in the repository. */
export function checkPackedPackage(packageDir, repoRoot, expectedDirectory) {
  return [
    ...checkNoWorkspaceRanges(packageDir),
    ...checkEntryPoints(packageDir),
    ...checkManifestFields(packageDir, expectedDirectory),
    ...checkNoMonorepoPaths(packageDir, repoRoot),
    ...checkDependencies(packageDir),
    ...checkTypeDependencies(packageDir),
  ];
}
