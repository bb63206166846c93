import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { isPath, type ToolPackageLocation, ToolPackageNotFoundError } from "../errors.js";

/**
 * Resolves a `[tools] packages` entry the way Node resolves an import written in a file of
 * `location.resolveFrom`: a path relative to that directory, or a package name looked up in its
 * `node_modules` and every ancestor's. Node's own resolver is used (`createRequire().resolve`);
 * an ESM-only package whose `exports` offer only the `import` condition is read from its
 * `package.json` in the directory that resolver found. Throws `ToolPackageNotFoundError` naming
 * every place searched.
 */
export async function resolveToolPackage(location: ToolPackageLocation): Promise<string> {
  const require = createRequire(join(location.resolveFrom, "podkit-manifest.js"));
  const searched = isPath(location.specifier)
    ? [join(location.resolveFrom, location.specifier)]
    : (require.resolve.paths(location.specifier) ?? []).map((dir) => join(dir, location.specifier));
  try {
    return require.resolve(location.specifier);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_PACKAGE_PATH_NOT_EXPORTED" && !isPath(location.specifier)) {
      const viaImport = await importConditionEntry(searched);
      if (viaImport) return viaImport;
    }
    throw new ToolPackageNotFoundError(location, searched, error);
  }
}

/** The `import` (or `default`) entry of the first `package.json` found among `dirs`. */
async function importConditionEntry(dirs: readonly string[]): Promise<string | undefined> {
  for (const dir of dirs) {
    const text = await readFile(join(dir, "package.json"), "utf8").catch(() => undefined);
    if (text === undefined) continue;
    const exports = (JSON.parse(text) as { exports?: unknown }).exports;
    const root =
      typeof exports === "object" && exports !== null && "." in exports
        ? (exports as Record<string, unknown>)["."]
        : exports;
    const entry = pickCondition(root);
    return entry ? join(dir, entry) : undefined;
  }
  return undefined;
}

function pickCondition(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  for (const condition of ["node", "import", "default"]) {
    const picked = pickCondition(record[condition]);
    if (picked) return picked;
  }
  return undefined;
}
