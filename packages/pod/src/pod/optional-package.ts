import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { LoadedManifest } from "@podkit/manifest";

/** Where an optional package was looked for and not found. */
export interface OptionalPackageNotFound {
  readonly searched: readonly string[];
  readonly cause: unknown;
}

/**
 * Resolves `name` as an import written in the manifest that set `key` would be, then as one in
 * the workspace: Node's resolver, looking in each directory's `node_modules` and every ancestor's
 * (the way `[tools] packages` are found). The pod depends on none of the packages it finds this
 * way (`@podkit/store-postgres`, `@podkit/memory`): a project installs the ones it selects.
 */
export function resolveOptionalPackage(
  loaded: LoadedManifest,
  name: string,
  key: string,
): { path: string } | OptionalPackageNotFound {
  const file = loaded.provenance.get(key)?.layer.file;
  const dirs = [...new Set([...(file === undefined ? [] : [dirname(file)]), loaded.workspace])];
  const searched: string[] = [];
  let cause: unknown;
  for (const dir of dirs) {
    const require = createRequire(join(dir, "podkit-manifest.js"));
    try {
      return { path: require.resolve(name) };
    } catch (error) {
      cause ??= error;
      for (const place of require.resolve.paths(name) ?? []) searched.push(join(place, name));
    }
  }
  return { searched: [...new Set(searched)], cause };
}

/** Imports a package `resolveOptionalPackage` found. */
export function importResolved(path: string): Promise<unknown> {
  return import(pathToFileURL(path).href);
}

/** ` (<key> set in <file>:<line>)`, or nothing when the value is the builtin default. */
export function whereSet(loaded: LoadedManifest, key: string): string {
  const source = loaded.provenance.get(key);
  const file = source?.layer.file;
  if (file === undefined) return "";
  return ` (${key.split(".").at(-1)} set in ${file}${source?.line === undefined ? "" : `:${source.line}`})`;
}
