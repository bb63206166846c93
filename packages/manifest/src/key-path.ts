/** One step of a key path: a table key or a list index. */
export type KeySegment = string | number;

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * Renders a key path the way the docs and error messages spell it: dotted keys, list indices in
 * brackets, and keys that are not bare TOML keys quoted (`worker.tool_output.per_tool."a.b"`).
 */
export function formatKeyPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else {
      const key = String(segment);
      const shown = BARE_KEY.test(key) ? key : JSON.stringify(key);
      out += out === "" ? shown : `.${shown}`;
    }
  }
  return out;
}

/** The key path with list indices dropped (`scope.allow[2].target` → `scope.allow.target`). */
export function formatSchemaPath(path: readonly PropertyKey[]): string {
  return formatKeyPath(path.filter((segment) => typeof segment !== "number"));
}
