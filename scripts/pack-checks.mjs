// Static checks of one packed package (the `package/` folder of its tarball), run by
// scripts/pack-smoke.mjs before the tarballs are installed anywhere. Each returns a list of
// problems, one sentence each naming the package and the file.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

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
 * runtime dependency is imported somewhere (else every user installs it for nothing).
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
    if (!imported.has(name)) {
      problems.push(`${manifest.name}: dependency ${name} is never imported by the packed code; remove it`);
    }
  }
  return problems;
}

/** All static checks of one unpacked package. */
export function checkPackedPackage(packageDir, repoRoot) {
  return [
    ...checkNoWorkspaceRanges(packageDir),
    ...checkEntryPoints(packageDir),
    ...checkNoMonorepoPaths(packageDir, repoRoot),
    ...checkDependencies(packageDir),
  ];
}
