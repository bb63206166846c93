import { dirname } from "node:path";
import {
  defaultApiKeyEnv,
  type LoadedManifest,
  loadManifest,
  type OutputConfig,
  PodkitManifestError,
  type ResolvedManifest,
  type SubpodRoleConfig,
  safeParseModelRef,
} from "@podkit/manifest";
import { PodkitPodError } from "../errors.js";
import { type OutputSchema, toOutputSchema } from "../output/output-schema.js";
import { tighterMode } from "../permissions/permissions.js";
import { loadPodResources } from "../resources/index.js";
import type { WarningSink } from "../warnings.js";
import { SubpodRoleError } from "./errors.js";
import { lendSandbox } from "./sandbox-loan.js";
import { type AskedScope, lendScope } from "./scope-loan.js";

/** A role ready to spawn: its declaration and the child's manifest with the loan applied. */
export interface SubpodRole {
  readonly name: string;
  readonly config: SubpodRoleConfig;
  /** The child's manifest: the role's file (or the parent's), overrides and the lent scope applied. */
  readonly loaded: LoadedManifest;
  /** What the role asks of the parent's scope (checked again at every spawn). */
  readonly asked: AskedScope;
  /**
   * The child's typed answer, when it has one (its manifest's `[output]`, see `childOutput`): a
   * child's answer is checked against it again before the parent sees it.
   */
  readonly output?: OutputSchema;
}

/**
 * Loads every `[subpods.<role>]` of `parent` into a spawnable role: the role's manifest (loaded
 * through the cascade from the parent's workspace), its overrides, and its scope and tools lent
 * from the parent's. A role that cannot be loaded or lent throws `SubpodRoleError` naming the
 * parent's file and line of the role — so a bad role fails when the parent is built, not when
 * the model first asks for it. For a child (`child` given), such a role is left out with a warning.
 */
export async function loadSubpodRoles(
  parent: LoadedManifest,
  child?: { warn: WarningSink },
): Promise<ReadonlyMap<string, SubpodRole>> {
  const roles = new Map<string, SubpodRole>();
  for (const [name, config] of Object.entries(parent.manifest.subpods ?? {})) {
    try {
      roles.set(name, await loadRole(parent, name, config));
    } catch (error) {
      // A child's roles that its own (smaller) loan cannot cover are simply not offered to it.
      if (child === undefined || !SubpodRoleError.isInstance(error)) throw error;
      child.warn({
        code: "pod.subpods",
        message: `role "${name}" is not offered to this child: ${error.message}`,
      });
    }
  }
  return roles;
}

async function loadRole(parent: LoadedManifest, name: string, config: SubpodRoleConfig): Promise<SubpodRole> {
  const source = parent.provenance.get(`subpods.${name}`);
  const where = { role: name, file: source?.layer.file ?? parent.file, line: source?.line };
  const fail = (problem: string, cause?: unknown): never => {
    throw new SubpodRoleError(where, problem, {
      ...(cause === undefined ? {} : { cause }),
      hint: "fix the role (or remove it) in the manifest; a child only ever gets part of what its parent has",
    });
  };
  const base = config.manifest === undefined ? parent : await loadRoleManifest(parent, config.manifest, fail);
  const manifest = structuredClone(base.manifest) as ResolvedManifest;
  applyOverrides(manifest, config, fail);
  const output = childOutput(config, base, config.manifest !== undefined);
  if (output === undefined) delete manifest.output;
  else manifest.output = structuredClone(output);
  lendTools(parent.manifest, manifest, config, fail);
  manifest.sandbox = lendSandbox(parent.manifest.sandbox, manifest.sandbox);
  lendPermissions(parent.manifest, manifest, config);
  const asked: AskedScope = config.scope
    ? { allow: config.scope.allow ?? [], deny: config.scope.deny ?? [] }
    : { allow: base.manifest.scope.allow, deny: base.manifest.scope.deny };
  const loan = await lendScope(parent.scope, asked, parent.workspace).catch((error: unknown) =>
    fail(`its scope cannot be used: ${messageOf(error)}`, error),
  );
  if (!loan.ok) fail(`${loan.rule} is wider than the parent's scope: ${loan.reason}`);
  const scope = loan.ok ? loan.scope : parent.scope;
  manifest.scope = { allow: [...scope.allow], deny: [...scope.deny] };
  const loaded: LoadedManifest = { ...base, manifest, scope, workspace: parent.workspace };
  // The pack is read once here so a bad pack fails the parent's construction, not a spawn.
  await loadPodResources(loaded, { onWarning: () => {} }).catch((error: unknown) =>
    fail(`its prompt pack cannot be loaded: ${messageOf(error)}`, error),
  );
  let schema: OutputSchema | undefined;
  try {
    schema = output === undefined ? undefined : toOutputSchema(output.schema);
  } catch (error) {
    fail(`its output schema cannot be used: ${messageOf(error)}`, error);
  }
  return { name, config, loaded, asked, ...(schema === undefined ? {} : { output: schema }) };
}

/**
 * The child's `[output]` (docs/subpods.md#typed-answers): the role's `[subpods.<role>.output]`,
 * else the `[output]` its own manifest file declares (`ownFile`). Never the parent's: a child
 * starting from the parent's manifest, or a role file over which the cascade or a `--set` brings
 * the workspace's `[output]`, would otherwise answer in the schema of the parent's answer.
 */
function childOutput(
  config: SubpodRoleConfig,
  base: LoadedManifest,
  ownFile: boolean,
): OutputConfig | undefined {
  if (config.output !== undefined) return config.output;
  if (!ownFile) return undefined;
  return base.provenance.get("output.schema")?.layer.kind === "file" ? base.manifest.output : undefined;
}

/**
 * The role's own manifest file, through the cascade as the parent's workspace and user config see
 * it, with the parent's `--set` overlays on top (as they are on the parent). Its `[model]` is the
 * parent's unless the role's file sets `model.ref` itself: a root run with `--set model.base_url=…`
 * or `-m other.toml` sends its children to the same model (the role's own `[subpods.<role>.model]`
 * still overrides, after this).
 */
async function loadRoleManifest(
  parent: LoadedManifest,
  file: string,
  fail: (problem: string, cause?: unknown) => never,
): Promise<LoadedManifest> {
  try {
    const overlays = parent.layers.flatMap((layer) =>
      layer.kind === "set" && layer.overlay !== undefined ? [layer.overlay] : [],
    );
    const loaded = await loadManifest({
      file,
      overlays,
      env: {
        cwd: parent.workspace,
        home: dirname(parent.userConfigDir),
        env: { XDG_CONFIG_HOME: dirname(parent.userConfigDir) },
      },
    });
    const ownModel = loaded.provenance.get("model.ref")?.layer;
    if (ownModel?.kind !== "file" && ownModel?.kind !== "set") {
      loaded.manifest.model = structuredClone(parent.manifest.model);
    }
    return loaded;
  } catch (error) {
    if (PodkitManifestError.isInstance(error) || PodkitPodError.isInstance(error)) {
      return fail(`its manifest ${file} does not load: ${messageOf(error)}`, error);
    }
    throw error;
  }
}

function applyOverrides(
  manifest: ResolvedManifest,
  config: SubpodRoleConfig,
  fail: (problem: string) => never,
): void {
  if (config.prompt_pack !== undefined) manifest.pod.prompt_pack = config.prompt_pack;
  if (config.worker?.system_prompt !== undefined) manifest.worker.system_prompt = config.worker.system_prompt;
  const ref = config.model?.ref;
  if (ref !== undefined) {
    const parsed = safeParseModelRef(ref);
    if ("problem" in parsed) fail(`model.ref: ${parsed.problem}`);
    else {
      const before = safeParseModelRef(manifest.model.ref);
      // Another provider reads another key: the old provider's variable would never hold it.
      if ("problem" in before || before.provider !== parsed.provider) {
        const keyEnv = defaultApiKeyEnv(parsed.provider);
        if (keyEnv === undefined) delete manifest.model.api_key_env;
        else manifest.model.api_key_env = keyEnv;
      }
      manifest.model.ref = ref;
    }
  }
}

/**
 * Tools only tighten down the tree: builtin tools are a subset of the parent's, and `bash` only
 * when the role says so and the parent has it (a child manifest's own `bash = true` is not enough).
 */
function lendTools(
  parent: ResolvedManifest,
  manifest: ResolvedManifest,
  config: SubpodRoleConfig,
  fail: (problem: string) => never,
): void {
  const builtin = config.tools?.builtin ?? manifest.tools.builtin;
  const extra = builtin.filter((tool) => !parent.tools.builtin.includes(tool));
  if (extra.length > 0) {
    fail(
      `tools.builtin asks for ${extra.join(", ")}, which the parent does not have (it has: ${parent.tools.builtin.join(", ") || "none"})`,
    );
  }
  if (config.tools?.bash === true && !parent.tools.bash) {
    fail("tools.bash = true, but the parent has no bash: a child never gets more than its parent");
  }
  manifest.tools = { ...manifest.tools, builtin: [...builtin], bash: config.tools?.bash === true };
}

/**
 * Permissions only tighten down the tree: the child's mode is the tighter of its parent's and the
 * role's (or its own manifest's), and the parent's rules hold in the child beside the child's own
 * (a deny anywhere denies).
 */
function lendPermissions(
  parent: ResolvedManifest,
  manifest: ResolvedManifest,
  config: SubpodRoleConfig,
): void {
  const own = config.permissions?.mode ?? manifest.permissions.mode;
  const rules = manifest.permissions.rule === parent.permissions.rule ? [] : manifest.permissions.rule;
  manifest.permissions = {
    mode: tighterMode(parent.permissions.mode, own),
    rule: [...parent.permissions.rule, ...rules.filter((rule) => !parent.permissions.rule.includes(rule))],
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
