// What Node a published package really needs: the lowest version that every package it installs
// (itself, its @podkit dependencies and everything they pull in, per pnpm-lock.yaml) declares in
// `engines.node`. npm prints an EBADENGINE warning for each installed package whose range the
// running Node misses, so a package's own `engines.node` must start exactly there: lower and
// installing on the lowest "supported" Node warns; higher and it refuses Nodes that work.
// The repository's own floor (the root package.json's `engines.node`, the Node the tests run on)
// counts as one more range. Used by scripts/node-engines.test.mjs and scripts/pack-smoke.mjs.
//
// Ranges are evaluated like node-semver evaluates them for release versions (x-ranges, partial
// versions, ^, ~, hyphen ranges, ||); Node versions carry no prerelease tags, so none are handled.
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { publishedPackages } from "./release-packages.mjs";

const VERSION =
  /^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** `a` compared with `b`, both [major, minor, patch]: negative, 0 or positive. */
export function compareVersions(a, b) {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** "22.15.0" / "v22.15.0" → [22, 15, 0]. */
export function parseVersion(text) {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(text).trim());
  if (!parts) throw new Error(`"${text}" is not a Node version`);
  return parts.slice(1, 4).map(Number);
}

export function formatVersion(version) {
  return version.join(".");
}

/** A partial version: numbers, null where it is missing or an x/*. */
function parsePartial(text, range) {
  const parts = VERSION.exec(text);
  if (!parts) throw new Error(`cannot read "${text}" in the engines range "${range}"`);
  const numbers = parts
    .slice(1, 4)
    .map((part) => (part === undefined || /[xX*]/.test(part) ? null : Number(part)));
  // "18.x.5" means 18.x: everything after the first wildcard is a wildcard.
  const first = numbers.indexOf(null);
  return first === -1 ? numbers : numbers.map((n, i) => (i < first ? n : null));
}

const filled = ([major, minor, patch]) => [major ?? 0, minor ?? 0, patch ?? 0];

/** The version after the last given part: 18 → 19.0.0, 18.2 → 18.3.0. */
function nextAfter([major, minor]) {
  return minor === null ? [major + 1, 0, 0] : [major, minor + 1, 0];
}

const NEVER = [{ op: "<", version: [0, 0, 0] }];

/** One comparator token ("^20.19.0", ">=18", "20.x") as plain comparators over full versions. */
function desugar(op, partial) {
  const [major, minor, patch] = partial;
  const full = patch !== null;
  if (major === null) return op === "<" || op === ">" ? NEVER : [];
  const low = { op: ">=", version: filled(partial) };
  switch (op) {
    case "":
    case "=":
      return full
        ? [
            { op: ">=", version: partial },
            { op: "<=", version: partial },
          ]
        : [low, { op: "<", version: nextAfter(partial) }];
    case ">=":
      return [low];
    case ">":
      return full ? [{ op: ">", version: partial }] : [{ op: ">=", version: nextAfter(partial) }];
    case "<":
      return [{ op: "<", version: filled(partial) }];
    case "<=":
      return full ? [{ op: "<=", version: partial }] : [{ op: "<", version: nextAfter(partial) }];
    case "~":
      return [low, { op: "<", version: minor === null ? [major + 1, 0, 0] : [major, minor + 1, 0] }];
    case "^": {
      let high;
      if (major > 0 || minor === null) high = [major + 1, 0, 0];
      else if (minor > 0 || patch === null) high = [0, minor + 1, 0];
      else high = [0, 0, patch + 1];
      return [low, { op: "<", version: high }];
    }
    default:
      throw new Error(`unknown operator "${op}"`);
  }
}

/** A range as alternatives (the `||` parts), each a list of plain comparators that must all hold. */
export function parseRange(range) {
  return String(range)
    .split("||")
    .map((alternative) => {
      const text = alternative.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1");
      const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(text);
      if (hyphen) {
        const to = parsePartial(hyphen[2], range);
        return [
          ...desugar(">=", parsePartial(hyphen[1], range)),
          ...(to[2] !== null ? desugar("<=", to) : desugar("<", to[0] === null ? to : nextAfter(to))),
        ];
      }
      if (text === "") return [];
      return text.split(/\s+/).flatMap((token) => {
        const [, op, version] = /^(>=|<=|>|<|=|\^|~)?(.*)$/.exec(token);
        return desugar(op ?? "", parsePartial(version, range));
      });
    });
}

const HOLDS = {
  ">=": (c) => c >= 0,
  ">": (c) => c > 0,
  "<": (c) => c < 0,
  "<=": (c) => c <= 0,
};

/** Whether the release version [major, minor, patch] (or "22.15.0") is in `range`. */
export function satisfies(version, range) {
  const v = Array.isArray(version) ? version : parseVersion(version);
  return parseRange(range).some((comparators) =>
    comparators.every(({ op, version: bound }) => HOLDS[op](compareVersions(v, bound))),
  );
}

/** The lowest release version in every one of `ranges`, or null when they share none. */
export function lowestVersion(ranges) {
  // The answer is where one of the ranges' intervals starts: try each lower bound, lowest first.
  const candidates = [[0, 0, 0]];
  for (const range of ranges) {
    for (const comparators of parseRange(range)) {
      for (const { op, version } of comparators) {
        if (op === ">=") candidates.push(version);
        if (op === ">") candidates.push([version[0], version[1], version[2] + 1]);
      }
    }
  }
  candidates.sort(compareVersions);
  return candidates.find((candidate) => ranges.every((range) => satisfies(candidate, range))) ?? null;
}

const unquote = (text) =>
  text
    .trim()
    .replace(/^'(.*)'$/, "$1")
    .replace(/^"(.*)"$/, "$1");

/**
 * The parts of a pnpm lockfile (format 9) this check needs: each importer's dependencies
 * (name → version or link:), each package's `engines.node`, each snapshot's dependencies.
 * pnpm may write its own toolchain as a first YAML document; the project is the last one.
 */
export function readLockfile(text) {
  const doc = text.split(/^---\s*$/m).at(-1);
  const importers = new Map();
  const engines = new Map();
  const snapshots = new Map();
  let section = null;
  let key = null;
  let field = null;
  let depName = null;
  for (const line of doc.split("\n")) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const indent = line.length - line.trimStart().length;
    const body = line.trim();
    if (indent === 0) {
      section = body.replace(/:.*$/, "");
      continue;
    }
    if (indent === 2) {
      key = unquote(body.replace(/:\s*(\{\})?$/, ""));
      field = null;
      if (section === "importers") importers.set(key, new Map());
      if (section === "snapshots") snapshots.set(key, new Map());
      continue;
    }
    if (indent === 4) {
      const [, name, value] = /^([^:]+):\s*(.*)$/.exec(body) ?? [];
      field = name;
      if (section === "packages" && name === "engines" && value) {
        const node = /(?:^|[{,\s])node:\s*('[^']*'|"[^"]*"|[^,}]+)/.exec(value);
        if (node) engines.set(key, unquote(node[1]));
      }
      continue;
    }
    if (section === "packages" && field === "engines" && indent === 6) {
      const node = /^node:\s*(.+)$/.exec(body);
      if (node) engines.set(key, unquote(node[1]));
    }
    if (section === "importers" && field === "dependencies") {
      if (indent === 6) depName = unquote(body.replace(/:$/, ""));
      const version = /^version:\s*(.+)$/.exec(body);
      if (indent === 8 && version) importers.get(key).set(depName, unquote(version[1]));
    }
    if (section === "snapshots" && field === "dependencies" && indent === 6) {
      const [, name, version] = /^('[^']+'|[^:]+):\s*(.+)$/.exec(body) ?? [];
      if (name) snapshots.get(key).set(unquote(name), unquote(version));
    }
  }
  return { importers, engines, snapshots };
}

/** "4.0.66(zod@4.6.7)" of "@ai-sdk/provider-utils" → "@ai-sdk/provider-utils@4.0.66(zod@4.6.7)"; aliases carry their own name. */
function snapshotKey(name, version) {
  return /^@?[^@(]+@/.test(version) ? version : `${name}@${version}`;
}

/**
 * Everything installing the workspace package at `importer` ("packages/cli") installs: its
 * `dependencies` (not dev, not optional: npm skips an optional package that does not fit the
 * Node, silently), through its workspace links, recursively. A map of "name@version" → its
 * `engines.node` (undefined when it declares none). `workspace` maps an importer path to the
 * `{ name, version, engines }` of its package.json, so linked @podkit packages count too.
 */
export function productionClosure(lock, importer, workspace = new Map()) {
  const found = new Map();
  const seenImporters = new Set();
  const visitImporter = (path) => {
    if (seenImporters.has(path)) return;
    seenImporters.add(path);
    const manifest = workspace.get(path);
    if (manifest && path !== importer)
      found.set(`${manifest.name}@${manifest.version}`, manifest.engines?.node);
    const deps = lock.importers.get(path);
    if (!deps) throw new Error(`pnpm-lock.yaml has no importer ${path}; run pnpm install`);
    for (const [name, version] of deps) {
      if (version.startsWith("link:")) visitImporter(posix.join(path, version.slice("link:".length)));
      else visitSnapshot(snapshotKey(name, version));
    }
  };
  const visitSnapshot = (key) => {
    const id = key.replace(/\(.*$/, "");
    if (found.has(id)) return;
    found.set(id, lock.engines.get(id));
    for (const [name, version] of lock.snapshots.get(key) ?? []) visitSnapshot(snapshotKey(name, version));
  };
  visitImporter(importer);
  return found;
}

/**
 * For each published package: the Node its `engines.node` starts at, the Node its whole install
 * needs (with the repository floor), and the installed packages that set that need.
 */
export function engineFindings(repoRoot) {
  const lock = readLockfile(readFileSync(join(repoRoot, "pnpm-lock.yaml"), "utf8"));
  const floor = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")).engines?.node;
  const published = publishedPackages(repoRoot);
  const workspace = new Map(published.map(({ importer, manifest }) => [importer, manifest]));
  return published.map(({ importer, manifest }) => {
    const closure = productionClosure(lock, importer, workspace);
    const ranges = [...closure].filter(([, range]) => range !== undefined);
    const needed = lowestVersion([...(floor ? [floor] : []), ...ranges.map(([, range]) => range)]);
    const declared = manifest.engines?.node;
    const declaredLowest = declared ? lowestVersion([declared]) : null;
    // Who sets the need: the installed packages whose range the next lower Node misses.
    const setBy = needed
      ? ranges
          .filter(([, range]) => !satisfies(versionBefore(needed), range))
          .map(([id, range]) => `${id} (${range})`)
      : [];
    return { name: manifest.name, declared, declaredLowest, needed, setBy, installs: closure.size };
  });
}

/** A version just below `version`, for "which range excludes anything lower". */
function versionBefore([major, minor, patch]) {
  if (patch > 0) return [major, minor, patch - 1];
  if (minor > 0) return [major, minor - 1, 999];
  return major > 0 ? [major - 1, 999, 999] : [0, 0, 0];
}

/** One sentence per published package whose `engines.node` does not start where its install needs. */
export function engineProblems(findings) {
  const problems = [];
  for (const { name, declared, declaredLowest, needed, setBy } of findings) {
    if (!needed) {
      problems.push(`${name}: the packages it installs share no Node version (${setBy.join(", ")})`);
    } else if (!declared) {
      problems.push(`${name}: package.json has no engines.node; set ">=${formatVersion(needed)}"`);
    } else if (!declaredLowest || compareVersions(declaredLowest, needed) !== 0) {
      const shown = setBy.length > 3 ? [...setBy.slice(0, 3), `${setBy.length - 3} more`] : setBy;
      const why = setBy.length > 0 ? `required by ${shown.join(", ")}` : "the repository's floor";
      problems.push(
        `${name}: engines.node "${declared}" starts at ${declaredLowest ? formatVersion(declaredLowest) : "no version"}, but the lowest Node everything it installs supports is ${formatVersion(needed)} (${why}); set engines.node to ">=${formatVersion(needed)}"`,
      );
    }
  }
  return problems;
}
