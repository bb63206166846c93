import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { finalizeManifest } from "./cascade/finalize-manifest.js";
import type { ManifestLayer, ParsedLayer, Provenance } from "./cascade/layer.js";
import { mergeLayers } from "./cascade/merge-layers.js";
import { parseOverlay } from "./cascade/overlay.js";
import { readLayerFile } from "./cascade/read-layer.js";
import { BUILTIN_LAYER } from "./defaults.js";
import {
  defaultPodkitEnv,
  findWorkspace,
  type PodkitEnv,
  userConfigDir,
  userManifestPath,
  workspaceDataDir,
  workspaceManifestPath,
} from "./env.js";
import type { ResolvedManifest, ToolPackageRef } from "./resolved-manifest.js";
import type { Scope } from "./scope/scope.js";

/** Inputs of `loadManifest`. */
export interface LoadManifestOptions {
  /** The explicit manifest file (relative to `env.cwd`); omitted → user and workspace layers only. */
  file?: string;
  /** `--set key=value` overlays, applied in order above every file. */
  overlays?: readonly string[];
  /** cwd, home and environment; defaults to the real process ones. */
  env?: PodkitEnv;
  /**
   * The workspace (relative to the cwd), used as given instead of searched for: scope targets,
   * tool paths, prompt packs and sessions resolve against it. Overrides `env.workspace`.
   */
  workspace?: string;
}

/** A manifest after the cascade, with where every value came from. */
export interface LoadedManifest {
  manifest: ResolvedManifest;
  /** The scope built from `manifest.scope`; relative paths given to it resolve against the workspace. */
  scope: Scope;
  /** Absolute path of the explicit manifest file, when one was given. */
  file?: string;
  /** The workspace: what `scope` targets, `$workspace/` prompt refs and the default store resolve against. */
  workspace: string;
  /**
   * Where podkit keeps this workspace's sessions (the filesystem store's `sessions/`):
   * `<workspace>/.podkit` when that directory exists, else a directory of its own under the user
   * state dir (`$XDG_STATE_HOME/podkit/workspaces/…`, default `~/.local/state/podkit/…`), so that
   * loading a manifest or running a pod never creates `.podkit/` in a directory that has none.
   */
  dataDir: string;
  /**
   * The user config dir the cascade used (`$XDG_CONFIG_HOME/podkit` or `~/.config/podkit`): its
   * `prompts.toml` and `prompts/` are the user layer of the prompt catalog.
   */
  userConfigDir: string;
  /**
   * `[tools] packages`, each with the directory it resolves from (that of the layer that listed
   * it; the cwd for `--set`) — what `@podkit/tools` needs to resolve them as Node would.
   */
  toolPackages: ToolPackageRef[];
  /** Every layer considered, lowest first (absent optional files included, `present: false`). */
  layers: ManifestLayer[];
  /** Merged key path (`worker.max_turns`, `scope.allow[2]`) → the layer that set it. */
  provenance: Map<string, Provenance>;
}

/**
 * Loads a manifest through the cascade: builtin defaults → user
 * (`<user config dir>/manifest.toml`) → workspace (`<workspace>/.podkit/manifest.toml`) → the
 * explicit file → `--set` overlays. Each layer is validated strictly and has its relative paths
 * resolved against its own directory before merging. Throws `ManifestError` for anything wrong,
 * naming file, line and key.
 */
export async function loadManifest(options: LoadManifestOptions = {}): Promise<LoadedManifest> {
  const given = options.env ?? defaultPodkitEnv();
  const env = options.workspace === undefined ? given : { ...given, workspace: options.workspace };
  const cwd = resolve(env.cwd);
  const workspace = findWorkspace(env);
  const file = options.file === undefined ? undefined : resolve(cwd, options.file);

  const builtin: ManifestLayer = { kind: "builtin", present: true };
  const parsed: ParsedLayer[] = [{ layer: builtin, data: BUILTIN_LAYER }];
  const layers: ManifestLayer[] = [builtin];
  const take = (result: ParsedLayer | { layer: ManifestLayer }) => {
    layers.push(result.layer);
    if ("data" in result) parsed.push(result);
  };

  take(await readLayerFile("user", userManifestPath(env), { required: false, cwd }));
  const workspaceFile = workspaceManifestPath(workspace);
  if (file !== undefined && (await sameFile(file, workspaceFile))) {
    layers.push({
      kind: "workspace",
      file: workspaceFile,
      present: false,
      note: "same file as the explicit manifest",
    });
  } else {
    take(await readLayerFile("workspace", workspaceFile, { required: false, cwd }));
  }
  if (file !== undefined) take(await readLayerFile("file", file, { required: true, cwd }));
  for (const overlay of options.overlays ?? []) take(parseOverlay(overlay, cwd));

  const merged = mergeLayers(parsed);
  const topFile = [...parsed].reverse().find((p) => p.layer.file !== undefined)?.layer.file;
  const { manifest, scope, toolPackages } = await finalizeManifest(merged.data, merged.provenance, {
    builtin,
    topFile,
    workspace,
    cwd,
  });
  const loaded: LoadedManifest = {
    manifest,
    scope,
    workspace,
    dataDir: workspaceDataDir(workspace, env),
    userConfigDir: userConfigDir(env),
    toolPackages,
    layers,
    provenance: merged.provenance,
  };
  if (file !== undefined) loaded.file = file;
  return loaded;
}

async function sameFile(a: string, b: string): Promise<boolean> {
  const real = (p: string) => realpath(p).catch(() => resolve(p));
  return (await real(a)) === (await real(b));
}
