import { stat } from "node:fs/promises";
import {
  defaultCompactionConfig,
  MEDIA_DEFAULTS,
  MEMORY_DEFAULTS,
  MEMORY_PROTECTED_DIRS,
  SESSION_DEFAULTS,
} from "../defaults.js";
import type { ManifestIssue } from "../errors.js";
import { manifestError } from "../format-issue.js";
import { defaultApiKeyEnv, defaultContextWindow, safeParseModelRef } from "../model-ref.js";
import type { ResolvedManifest, ToolPackageRef } from "../resolved-manifest.js";
import { type ManifestLayerData, type ScopeRuleLayer, SUBPOD_DEFAULTS } from "../schema/layer-schema.js";
import { canonicalPath } from "../scope/canonical-path.js";
import { Scope, type ScopeRule } from "../scope/scope.js";
import { finalizeOutput, OUTPUT_SCHEMA_HINT, OUTPUT_SCHEMA_KEY } from "./finalize-output.js";
import { finalizeSandbox } from "./finalize-sandbox.js";
import { finalizeSkills } from "./finalize-skills.js";
import { finalizeTools } from "./finalize-tools.js";
import type { ManifestLayer, Provenance } from "./layer.js";
import { SCHEMA_HINT } from "./validate-layer.js";

/** What finalization needs besides the merged document. */
export interface FinalizeContext {
  builtin: ManifestLayer;
  /** The topmost file layer, named by "required but missing" errors. */
  topFile: string | undefined;
  workspace: string;
  cwd: string;
}

/**
 * Turns the merged layers into a `ResolvedManifest`: checks what only the whole cascade can tell
 * (required keys, cross-field rules, duplicate MCP server names, prompt pack existence), fills
 * the defaults that depend on other values (api key variable, context window, compaction and
 * memory knobs), reads and checks output schemas, and canonicalizes the scope. Every problem
 * names the layer file and line that set the offending value.
 */
export async function finalizeManifest(
  merged: ManifestLayerData,
  provenance: Map<string, Provenance>,
  context: FinalizeContext,
): Promise<{ manifest: ResolvedManifest; scope: Scope; toolPackages: ToolPackageRef[] }> {
  const issues: ManifestIssue[] = [];
  const at = (keyPath: string, problem: string): ManifestIssue => {
    const source = provenance.get(keyPath);
    const issue: ManifestIssue = { problem, keyPath: source?.keyPath ?? keyPath };
    const file = source?.layer.file ?? (source ? undefined : context.topFile);
    if (file !== undefined) issue.file = file;
    if (source?.layer.overlay !== undefined) issue.overlay = source.layer.overlay;
    if (source?.line !== undefined) issue.line = source.line;
    return issue;
  };
  const fromBuiltin = (keyPath: string, note?: string) => {
    provenance.set(keyPath, { layer: context.builtin, keyPath, ...(note ? { note } : {}) });
  };

  const name = merged.pod?.name;
  if (name === undefined)
    issues.push(at("pod.name", 'required, but no layer sets it; add name = "…" under [pod]'));
  const ref = merged.model?.ref;
  if (ref === undefined) {
    issues.push(
      at("model.ref", 'required, but no layer sets it; add ref = "<provider>/<model id>" under [model]'),
    );
  }
  const parsedRef = ref === undefined ? undefined : safeParseModelRef(ref);
  const modelRef = parsedRef && !("problem" in parsedRef) ? parsedRef : undefined;

  const model = { ...merged.model } as ResolvedManifest["model"];
  if (modelRef) {
    const keyEnv = defaultApiKeyEnv(modelRef.provider);
    if (model.api_key_env === undefined && keyEnv !== undefined) {
      model.api_key_env = keyEnv;
      fromBuiltin("model.api_key_env");
    }
    if (model.context_window === undefined) {
      model.context_window = defaultContextWindow(modelRef);
      fromBuiltin("model.context_window");
    }
    if (modelRef.provider === "openai-compatible" && model.base_url === undefined) {
      issues.push(
        at("model.ref", 'provider "openai-compatible" needs model.base_url (the server\'s /v1 URL)'),
      );
    }
  }

  const compaction = finalizeCompaction(merged, model.context_window ?? 200_000, fromBuiltin, at, issues);
  const memory = finalizeMemory(merged, fromBuiltin);
  const session = finalizeSession(merged, fromBuiltin);

  const servers = merged.mcp?.server ?? [];
  servers.forEach((server, i) => {
    const first = servers.findIndex((s) => s.name === server.name);
    if (first < i) {
      const other = provenance.get(`mcp.server[${first}].name`);
      const where = other?.layer.file ?? other?.layer.overlay ?? other?.layer.kind ?? "another layer";
      issues.push(
        at(`mcp.server[${i}].name`, `duplicate MCP server name "${server.name}" (also defined in ${where})`),
      );
    }
    if ((server.command === undefined) === (server.url === undefined)) {
      issues.push(
        at(
          `mcp.server[${i}]`,
          server.command === undefined
            ? `MCP server "${server.name}" needs command = "…" (stdio) or url = "…" (Streamable HTTP)`
            : `MCP server "${server.name}" sets both command and url; keep one (command for stdio, url for Streamable HTTP)`,
        ),
      );
    }
    if (server.url !== undefined && (server.args || server.env || server.cwd)) {
      issues.push(
        at(
          `mcp.server[${i}].url`,
          `MCP server "${server.name}" uses url, so args, env and cwd do not apply; remove them`,
        ),
      );
    }
  });
  const schedules = merged.schedule ?? [];
  schedules.forEach((schedule, i) => {
    const first = schedules.findIndex((s) => s.name === schedule.name);
    if (first < i) {
      const other = provenance.get(`schedule[${first}].name`);
      const where = other?.layer.file ?? other?.layer.overlay ?? other?.layer.kind ?? "another layer";
      issues.push(
        at(`schedule[${i}].name`, `duplicate schedule name "${schedule.name}" (also defined in ${where})`),
      );
    }
  });
  const subpods = finalizeSubpods(merged, at, issues);
  const { tools, packageRefs } = finalizeTools(merged, provenance, context, fromBuiltin, at, issues);
  const sandbox = finalizeSandbox(merged, tools, fromBuiltin);
  const output = await finalizeOutput(merged.output, "output", context, fromBuiltin, at, issues);
  const skills = await finalizeSkills(merged, context.workspace, fromBuiltin, at, issues);
  for (const [role, config] of Object.entries(subpods)) {
    const roleOutput = merged.subpods?.[role]?.output;
    const key = `subpods.${role}.output`;
    const resolved = await finalizeOutput(roleOutput, key, context, fromBuiltin, at, issues);
    if (resolved) config.output = resolved;
  }

  const pack = merged.pod?.prompt_pack;
  if (pack !== undefined && !pack.startsWith("$")) {
    const isFile = await stat(pack).then(
      (s) => s.isFile(),
      () => false,
    );
    if (!isFile) issues.push(at("pod.prompt_pack", `prompt pack not found: ${pack}`));
  }

  const deny = [...(merged.scope?.deny ?? [])];
  if (memory) {
    for (const dir of MEMORY_PROTECTED_DIRS) {
      for (const field of ["", ".target", ".permission", ".recursive"]) {
        fromBuiltin(`scope.deny[${deny.length}]${field}`, "[memory] is on");
      }
      deny.push({ target: `${context.workspace}/${dir}`, permission: "write", recursive: true });
    }
  }
  const allowRules = await canonicalRules(merged.scope?.allow ?? [], "allow", at, issues);
  const denyRules = await canonicalRules(deny, "deny", at, issues);

  if (issues.length > 0) {
    const onlyOutput = issues.every((issue) => OUTPUT_SCHEMA_KEY.test(issue.keyPath ?? ""));
    throw manifestError("schema", issues, {
      cwd: context.cwd,
      hint: onlyOutput ? OUTPUT_SCHEMA_HINT : SCHEMA_HINT,
    });
  }

  const worker = merged.worker as ResolvedManifest["worker"];
  const manifest: ResolvedManifest = {
    pod: merged.pod as ResolvedManifest["pod"],
    model,
    worker,
    scope: { allow: allowRules, deny: denyRules },
    ...(compaction ? { compaction } : {}),
    ...(memory ? { memory } : {}),
    media: finalizeMedia(merged, fromBuiltin),
    mcp: {
      server: servers.map((server) => ({
        ...server,
        args: server.args ?? [],
        env: server.env ?? {},
        headers_env: server.headers_env ?? {},
      })),
    },
    tools,
    sandbox,
    session,
    schedule: schedules,
    subpods,
    ...(merged.budget === undefined ? {} : { budget: merged.budget }),
    permissions: { mode: merged.permissions?.mode ?? "default", rule: merged.permissions?.rule ?? [] },
    ...(output ? { output } : {}),
    ...(skills ? { skills } : {}),
  };
  const scope = await Scope.fromRules(allowRules, denyRules, context.workspace);
  return { manifest, scope, toolPackages: packageRefs };
}

type At = (keyPath: string, problem: string) => ManifestIssue;

/** `[media]` with its defaults filled; the keys no layer set are the builtin layer's. */
function finalizeMedia(
  merged: ManifestLayerData,
  fromBuiltin: (keyPath: string) => void,
): ResolvedManifest["media"] {
  const set = merged.media ?? {};
  for (const key of Object.keys(MEDIA_DEFAULTS)) if (!(key in set)) fromBuiltin(`media.${key}`);
  return { ...MEDIA_DEFAULTS, ...set };
}

function finalizeCompaction(
  merged: ManifestLayerData,
  contextWindow: number,
  fromBuiltin: (keyPath: string) => void,
  at: At,
  issues: ManifestIssue[],
): ResolvedManifest["compaction"] {
  const { enabled, ...set } = merged.compaction ?? {};
  if (merged.compaction === undefined || enabled === false) return undefined;
  const config = { ...defaultCompactionConfig(contextWindow), ...set };
  for (const key of Object.keys(config)) if (!(key in set)) fromBuiltin(`compaction.${key}`);
  if (config.threshold > config.request_threshold) {
    issues.push(
      at(
        "compaction.threshold",
        `must not exceed compaction.request_threshold (${config.threshold} > ${config.request_threshold}); the request check is the safety net above it`,
      ),
    );
  }
  if (config.summary_target_tokens > config.summary_max_tokens) {
    issues.push(
      at(
        "compaction.summary_target_tokens",
        `must not exceed compaction.summary_max_tokens (${config.summary_target_tokens} > ${config.summary_max_tokens})`,
      ),
    );
  }
  return config;
}

function finalizeMemory(
  merged: ManifestLayerData,
  fromBuiltin: (keyPath: string) => void,
): ResolvedManifest["memory"] {
  const { enabled, ...set } = merged.memory ?? {};
  if (merged.memory === undefined || enabled === false) return undefined;
  const config = { ...MEMORY_DEFAULTS, ...set };
  for (const key of Object.keys(config)) if (!(key in set)) fromBuiltin(`memory.${key}`);
  return config;
}

/** Roles with their caps filled; a role needs a description (the model chooses by it). */
function finalizeSubpods(
  merged: ManifestLayerData,
  at: At,
  issues: ManifestIssue[],
): ResolvedManifest["subpods"] {
  const roles: ResolvedManifest["subpods"] = {};
  for (const [role, entry] of Object.entries(merged.subpods ?? {})) {
    // `output` is resolved on its own (its schema file is read), after the roles.
    const { description, output: _output, ...rest } = entry;
    if (description === undefined) {
      issues.push(
        at(`subpods.${role}`, `role "${role}" needs description = "…" (the model picks roles by it)`),
      );
      continue;
    }
    roles[role] = {
      ...rest,
      description,
      max_depth: entry.max_depth ?? SUBPOD_DEFAULTS.max_depth,
      max_concurrent: entry.max_concurrent ?? SUBPOD_DEFAULTS.max_concurrent,
    };
  }
  return roles;
}

/** `store` defaults to the filesystem; a PostgreSQL store defaults its variable name too. */
function finalizeSession(
  merged: ManifestLayerData,
  fromBuiltin: (keyPath: string) => void,
): ResolvedManifest["session"] {
  const store = merged.session?.store ?? SESSION_DEFAULTS.store;
  if (merged.session?.store === undefined) fromBuiltin("session.store");
  if (store === "fs") return { store };
  const urlEnv = merged.session?.url_env;
  if (urlEnv === undefined) fromBuiltin("session.url_env");
  return { store, url_env: urlEnv ?? SESSION_DEFAULTS.url_env };
}

async function canonicalRules(
  rules: readonly ScopeRuleLayer[],
  kind: "allow" | "deny",
  at: At,
  issues: ManifestIssue[],
): Promise<ScopeRule[]> {
  const out: ScopeRule[] = [];
  for (const [i, rule] of rules.entries()) {
    // Targets are absolute here: each layer resolved its own relative ones.
    const canonical = await canonicalPath(rule.target);
    if (canonical.ok)
      out.push({ target: canonical.path, permission: rule.permission, recursive: rule.recursive ?? true });
    else issues.push(at(`scope.${kind}[${i}].target`, `cannot be used: ${canonical.detail}`));
  }
  return out;
}
