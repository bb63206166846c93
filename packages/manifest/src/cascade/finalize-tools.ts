import { dirname } from "node:path";
import { READ_TOOLS, TOOLS_DEFAULTS, WRITE_TOOLS } from "../defaults.js";
import type { ManifestIssue } from "../errors.js";
import { formatKeyPath } from "../key-path.js";
import type { BuiltinToolName, ToolPackageRef, ToolsConfig } from "../resolved-manifest.js";
import type { ManifestLayerData } from "../schema/layer-schema.js";
import type { Provenance } from "./layer.js";

type At = (keyPath: string, problem: string) => ManifestIssue;

/**
 * `[tools]` after the cascade: the builtin list defaults to the read tools, plus the write tools
 * when some allow rule grants write; each package remembers the directory of the layer that
 * declared it (npm names and relative paths resolve from there, as Node would from a file in
 * it); options must belong to a declared package, so a misspelt name is an error, not a no-op.
 */
export function finalizeTools(
  merged: ManifestLayerData,
  provenance: Map<string, Provenance>,
  context: { cwd: string },
  fromBuiltin: (keyPath: string, note?: string) => void,
  at: At,
  issues: ManifestIssue[],
): { tools: ToolsConfig; packageRefs: ToolPackageRef[] } {
  const set = merged.tools ?? {};
  const hasWriteRule = (merged.scope?.allow ?? []).some((rule) => rule.permission === "write");

  let builtin: BuiltinToolName[];
  if (set.builtin === undefined) {
    builtin = hasWriteRule ? [...READ_TOOLS, ...WRITE_TOOLS] : [...READ_TOOLS];
    fromBuiltin(
      "tools.builtin",
      hasWriteRule ? "read tools, and write tools because a write rule exists" : "read tools",
    );
  } else {
    builtin = [...new Set(set.builtin)];
  }

  const filled = { ...TOOLS_DEFAULTS, ...pick(set) };
  for (const key of Object.keys(TOOLS_DEFAULTS)) {
    if (!(key in pick(set))) fromBuiltin(`tools.${key}`);
  }
  if (filled.bash_timeout_ms > filled.bash_max_timeout_ms) {
    issues.push(
      at(
        "tools.bash_timeout_ms",
        `must not exceed tools.bash_max_timeout_ms (${filled.bash_timeout_ms} > ${filled.bash_max_timeout_ms})`,
      ),
    );
  }

  // `packages` is a plain list: the topmost layer that sets it replaces the others, so one
  // provenance entry names the declaring layer for every element.
  const source = provenance.get("tools.packages");
  const declaredIn = source?.layer.file ?? (source?.layer.overlay ? `--set ${source.layer.overlay}` : "");
  const resolveFrom = source?.layer.file ? dirname(source.layer.file) : context.cwd;
  const packages: ToolPackageRef[] = [];
  for (const specifier of set.packages ?? []) {
    if (packages.some((p) => p.specifier === specifier)) continue;
    packages.push({ specifier, resolveFrom, declaredIn });
  }

  const options = set.options ?? {};
  for (const name of Object.keys(options)) {
    if (!packages.some((p) => p.specifier === name)) {
      issues.push(
        at(
          formatKeyPath(["tools", "options", name]),
          `options for "${name}", which tools.packages does not list${
            packages.length ? ` (it lists ${packages.map((p) => `"${p.specifier}"`).join(", ")})` : ""
          }; add the package to tools.packages or fix the name`,
        ),
      );
    }
  }

  // Like options: a deferral for a package that is not listed is a misspelt name, not a no-op.
  const defer = set.defer ?? {};
  for (const name of Object.keys(defer)) {
    if (!packages.some((p) => p.specifier === name)) {
      issues.push(
        at(
          formatKeyPath(["tools", "defer", name]),
          `defer for "${name}", which tools.packages does not list${
            packages.length ? ` (it lists ${packages.map((p) => `"${p.specifier}"`).join(", ")})` : ""
          }; add the package to tools.packages or fix the name (an MCP server takes defer in its [[mcp.server]] entry)`,
        ),
      );
    }
  }

  const tools: ToolsConfig = {
    builtin,
    bash: filled.bash,
    confirm_writes: filled.confirm_writes,
    bash_env: [...new Set(set.bash_env ?? [])],
    bash_timeout_ms: filled.bash_timeout_ms,
    bash_max_timeout_ms: filled.bash_max_timeout_ms,
    track_files: filled.track_files,
    packages: packages.map((p) => p.specifier),
    options,
    defer,
    defer_auto_share: filled.defer_auto_share,
  };
  return { tools, packageRefs: packages };
}

function pick(set: NonNullable<ManifestLayerData["tools"]>) {
  const out: Partial<Record<keyof typeof TOOLS_DEFAULTS, number | boolean>> = {};
  if (set.bash !== undefined) out.bash = set.bash;
  if (set.confirm_writes !== undefined) out.confirm_writes = set.confirm_writes;
  if (set.bash_timeout_ms !== undefined) out.bash_timeout_ms = set.bash_timeout_ms;
  if (set.bash_max_timeout_ms !== undefined) out.bash_max_timeout_ms = set.bash_max_timeout_ms;
  if (set.track_files !== undefined) out.track_files = set.track_files;
  if (set.defer_auto_share !== undefined) out.defer_auto_share = set.defer_auto_share;
  return out as Partial<typeof TOOLS_DEFAULTS>;
}
