import { isAbsolute, resolve } from "node:path";
import type { ManifestIssue } from "../errors.js";
import { manifestError } from "../format-issue.js";
import { spellPromptRef } from "../prompt-ref-syntax.js";
import { type IssueOrigin, issueAtKey } from "../schema/describe-issues.js";
import type { ManifestLayerData, OutputLayer, ScopeRuleLayer } from "../schema/layer-schema.js";
import { SCHEMA_HINT } from "./validate-layer.js";

/**
 * Makes a layer's relative paths absolute against `baseDir` (the layer file's directory, or the
 * cwd for `--set`), before the layer is merged: scope targets, `pod.prompt_pack` (unless it is a
 * `$prefix` reference), `mcp.server.cwd`, a `mcp.server.command` written as a relative path and an
 * `output.schema` file path (also a role's).
 * `tools.packages` stay as written (npm names must resolve as Node would from this layer's
 * directory, which the cascade records per entry); only misuse such as `~` is refused here.
 * Scope targets are joined without lexical `..` folding; `Scope` resolves them physically.
 */
export function resolveLayerPaths(
  data: ManifestLayerData,
  baseDir: string,
  origin: IssueOrigin,
  cwd: string,
): ManifestLayerData {
  const issues: ManifestIssue[] = [];
  const fail = (path: (string | number)[], problem: string) => issues.push(issueAtKey(origin, path, problem));
  const out: ManifestLayerData = structuredClone(data);

  const rules = (list: ScopeRuleLayer[] | undefined, kind: "allow" | "deny") => {
    list?.forEach((rule, i) => {
      const problem = pathMisuse(rule.target, "scope target");
      if (problem) fail(["scope", kind, i, "target"], problem);
      else if (!isAbsolute(rule.target)) rule.target = `${baseDir.replace(/\/+$/, "")}/${rule.target}`;
    });
  };
  rules(out.scope?.allow, "allow");
  rules(out.scope?.deny, "deny");

  // `[output] schema` as a path: a JSON Schema file, read after the cascade.
  const resolveSchemaPath = (output: OutputLayer | undefined, path: (string | number)[]) => {
    if (typeof output?.schema !== "string") return;
    const problem = pathMisuse(output.schema, "schema file path");
    if (problem) fail(path, problem);
    else output.schema = resolve(baseDir, output.schema);
  };
  resolveSchemaPath(out.output, ["output", "schema"]);

  for (const [role, entry] of Object.entries(out.subpods ?? {})) {
    const at = (key: string) => ["subpods", role, key];
    (["allow", "deny"] as const).forEach((kind) => {
      entry.scope?.[kind]?.forEach((rule, i) => {
        const problem = pathMisuse(rule.target, "scope target");
        if (problem) fail([...at("scope"), kind, i, "target"], problem);
        else if (!isAbsolute(rule.target)) rule.target = `${baseDir.replace(/\/+$/, "")}/${rule.target}`;
      });
    });
    if (entry.manifest !== undefined) {
      const problem = pathMisuse(entry.manifest, "role manifest path");
      if (problem) fail(at("manifest"), problem);
      else entry.manifest = resolve(baseDir, entry.manifest);
    }
    resolveSchemaPath(entry.output, [...at("output"), "schema"]);
    const rolePack = entry.prompt_pack;
    if (rolePack !== undefined) {
      const problem = rolePack.startsWith("$")
        ? promptRefProblem(rolePack)
        : pathMisuse(rolePack, "prompt pack");
      if (problem) fail(at("prompt_pack"), problem);
      else if (!rolePack.startsWith("$")) entry.prompt_pack = resolve(baseDir, rolePack);
    }
  }

  const pack = out.pod?.prompt_pack;
  if (out.pod && pack !== undefined) {
    const problem = pack.startsWith("$") ? promptRefProblem(pack) : pathMisuse(pack, "prompt pack");
    if (problem) fail(["pod", "prompt_pack"], problem);
    else if (!pack.startsWith("$")) out.pod.prompt_pack = resolve(baseDir, pack);
  }

  out.mcp?.server?.forEach((server, i) => {
    if (server.cwd !== undefined) {
      const problem = pathMisuse(server.cwd, "server cwd");
      if (problem) fail(["mcp", "server", i, "cwd"], problem);
      else server.cwd = resolve(baseDir, server.cwd);
    }
    if (server.command?.includes("/") && !isAbsolute(server.command)) {
      server.command = resolve(baseDir, server.command);
    }
  });

  out.tools?.packages?.forEach((specifier, i) => {
    const problem = pathMisuse(specifier, "tool package path");
    if (problem) fail(["tools", "packages", i], problem);
  });

  if (issues.length > 0) throw manifestError("schema", issues, { cwd, hint: SCHEMA_HINT });
  return out;
}

function pathMisuse(path: string, what: string): string | undefined {
  if (path.includes("\0")) return `the ${what} contains a NUL character`;
  if (path === "~" || path.startsWith("~/")) {
    return `"~" is not expanded in a ${what}; write an absolute path or one relative to this file's directory`;
  }
  if (path.startsWith("$")) {
    return `a ${what} cannot be a $prefix reference ("${path}"); those name prompt files — write a path relative to this file's directory`;
  }
  return undefined;
}

/** The rules for `$prefix/<path>` references (docs/prompts.md). */
function promptRefProblem(ref: string): string | undefined {
  const spelled = spellPromptRef(ref);
  if (spelled.kind === "prefixed") return undefined;
  const problem = spelled.kind === "relative" ? "expected `$prefix/path`" : spelled.problem;
  return `"${ref}" is not a valid prompt reference: ${problem}`;
}
