import { PromptCatalog } from "../catalog/prompt-catalog.js";
import { PromptLoader } from "../prompt-ref/prompt-loader.js";
import type { RenderLimits } from "../template/budget.js";
import { TemplateEnvironment } from "../template/environment.js";
import { processWarningSink, type WarningSink } from "../warnings.js";

/**
 * What layering needs from a loaded manifest. A `LoadedManifest` from `@podkit/manifest`
 * satisfies it as it is; the CLI passes `{ workspace, userConfigDir }` when there is no manifest.
 */
export interface PodResourceSource {
  /** The workspace: `.podkit/prompts.toml` and the `$workspace/…` root. */
  readonly workspace: string;
  /** The user config dir: `prompts.toml` and the `$user/…` root. */
  readonly userConfigDir: string;
  /** The resolved manifest; `pod.prompt_pack` (already absolute, or a `$prefix` ref) is the fourth layer. */
  readonly manifest?: { readonly pod: { readonly prompt_pack?: string | undefined } };
}

export interface LoadPodResourcesOptions {
  /** Receives warnings (unknown pack keys, …); default: a Node process warning. */
  readonly onWarning?: WarningSink;
  /** Override of the builtin `resources/prompts` directory (tests). */
  readonly builtinDir?: string;
  /** Render limits of every template this loader compiles; unset ones keep `DEFAULT_RENDER_LIMITS`. */
  readonly renderLimits?: Partial<RenderLimits>;
}

/** The prompt loader (the three `$prefix` roots) and the fully layered catalog built on it. */
export interface PodResources {
  readonly loader: PromptLoader;
  readonly catalog: PromptCatalog;
}

/**
 * The one entry point to a pod's prompt resources: builds the `$podkit`/`$user`/
 * `$workspace` loader and loads the catalog with all four layers — builtin, user, workspace and
 * the manifest's `prompt_pack`. The CLI uses it today and `Pod.fromManifest`/`Pod.restore` will,
 * so user and workspace layers cannot be lost on one code path while another keeps them.
 */
export async function loadPodResources(
  source: PodResourceSource,
  options: LoadPodResourcesOptions = {},
): Promise<PodResources> {
  const locations = {
    userConfigDir: source.userConfigDir,
    workspace: source.workspace,
    ...(options.builtinDir === undefined ? {} : { builtinDir: options.builtinDir }),
  };
  const environment = new TemplateEnvironment(
    options.renderLimits === undefined ? undefined : { limits: options.renderLimits },
  );
  const loader = PromptLoader.create(locations, { environment });
  const promptPack = source.manifest?.pod.prompt_pack;
  const catalog = await PromptCatalog.load({
    ...locations,
    loader,
    ...(promptPack === undefined ? {} : { promptPack }),
    onWarning: options.onWarning ?? processWarningSink,
  });
  return { loader, catalog };
}
