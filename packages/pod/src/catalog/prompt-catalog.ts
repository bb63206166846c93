import { readFile } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { PodUsageError } from "../errors.js";
import { readBuiltinOnce } from "../prompt-ref/builtin-file-cache.js";
import { PromptRefError } from "../prompt-ref/errors.js";
import { PromptLoader, type PromptLocations } from "../prompt-ref/prompt-loader.js";
import { describeRootEscape, findRootEscape } from "../prompt-ref/root-containment.js";
import { formatLocation, TemplateSyntaxError } from "../template/errors.js";
import type { LinkedTemplate } from "../template/scope.js";
import { processWarningSink, type WarningSink } from "../warnings.js";
import { PromptCatalogError, type PromptLayer, PromptRenderError, UnknownPromptKeyError } from "./errors.js";
import { isPodPrompt, POD_PROMPTS, type PodPrompt, type PodPromptContextArgs } from "./pod-prompt.js";
import { type PromptPackEntry, parsePromptPack } from "./prompt-pack.js";

/**
 * Where to find the four layers (docs/prompts.md). `userConfigDir` and `workspace` must be given —
 * `null` leaves that layer (and its `$prefix`) out on purpose; a catalog without them is asked
 * for with `PromptCatalog.loadBuiltinOnly()`, never obtained by forgetting an option.
 */
export interface PromptCatalogOptions {
  /** `<user config dir>`: the user pack `prompts.toml` and the `$user/…` root `prompts/`. */
  readonly userConfigDir: string | null;
  /** The workspace: the pack `.podkit/prompts.toml` and the `$workspace/…` root `.podkit/prompts/`. */
  readonly workspace: string | null;
  /** Override of the builtin `resources/prompts` directory (`$podkit/…`). */
  readonly builtinDir?: string;
  /** `[pod].prompt_pack`: a path (relative to `manifestDir`) or a `$prefix` ref. Must exist. */
  readonly promptPack?: string;
  /** Directory of the manifest that set `promptPack` (for relative paths). */
  readonly manifestDir?: string;
  /** Resolver and template environment to use; defaults to one built from the locations. */
  readonly loader?: PromptLoader;
  /** Receives "unknown key" warnings of runtime layers; default: a Node process warning. */
  readonly onWarning?: WarningSink;
}

/** Which layer and file a key's winning value came from, and its template source. */
export interface PromptExplanation {
  readonly key: PodPrompt;
  readonly layer: PromptLayer;
  readonly file: string;
  readonly source: string;
}

interface Winner extends PromptExplanation {
  readonly template: LinkedTemplate;
}

interface PackFile {
  readonly layer: PromptLayer;
  readonly file: string;
  readonly text: string;
}

/**
 * Every prompt the pod injects into a worker (seed 002), merged per key from four layers —
 * builtin `internal.toml` → user `prompts.toml` → workspace `.podkit/prompts.toml` → the
 * manifest's `prompt_pack`, later wins. Every value of every layer is compiled when the catalog
 * loads and every winning value is linked to its includes, so `render` does no I/O and a
 * broken pack fails construction, not a turn. One instance serves every code path of a pod.
 */
export class PromptCatalog {
  private constructor(
    readonly loader: PromptLoader,
    private readonly winners: ReadonlyMap<PodPrompt, Winner>,
  ) {}

  /**
   * Loads and compiles the layered catalog; throws `PromptCatalogError` naming layer, file and
   * key. Pods and the CLI reach this through `loadPodResources`, the one entry point.
   */
  static async load(options: PromptCatalogOptions): Promise<PromptCatalog> {
    if (options?.userConfigDir === undefined || options.workspace === undefined) {
      throw new PodUsageError(
        "PromptCatalog.load needs userConfigDir and workspace (null to leave a layer out); " +
          "use loadPodResources(loadedManifest), or PromptCatalog.loadBuiltinOnly() for the builtin pack alone",
      );
    }
    const locations: PromptLocations = {
      ...(options.userConfigDir === null ? {} : { userConfigDir: options.userConfigDir }),
      ...(options.workspace === null ? {} : { workspace: options.workspace }),
      ...(options.builtinDir === undefined ? {} : { builtinDir: options.builtinDir }),
    };
    const loader = options.loader ?? PromptLoader.create(locations);
    const warn = options.onWarning ?? processWarningSink;
    const packs = await readPackFiles(loader, options);
    const merged = new Map<PodPrompt, PromptPackEntry>();
    for (const pack of packs) {
      for (const entry of parsePromptPack(pack.text, pack, warn)) {
        compileEntry(loader, entry); // every layer's values are syntax-checked, winners or not
        merged.set(entry.key, entry);
      }
    }
    const winners = new Map<PodPrompt, Winner>();
    const builtinFile = (packs[0] as PackFile).file;
    for (const key of POD_PROMPTS) {
      const entry = merged.get(key);
      if (!entry)
        throw new PromptCatalogError(`the builtin pack lacks the key ${key}`, {
          layer: "builtin",
          file: builtinFile,
          key,
        });
      const template = await linkEntry(loader, entry);
      winners.set(key, { key, layer: entry.layer, file: entry.file, source: entry.source, template });
    }
    return new PromptCatalog(loader, winners);
  }

  /**
   * The builtin pack alone, with no user, workspace or manifest layer and no `$user`/`$workspace`
   * prefix — for tests and tools that must not see a user's packs. A pod never uses this.
   */
  static loadBuiltinOnly(
    options: { builtinDir?: string; onWarning?: WarningSink } = {},
  ): Promise<PromptCatalog> {
    return PromptCatalog.load({ userConfigDir: null, workspace: null, ...options });
  }

  /**
   * Renders prompt `key` with its typed context (checked at compile time). Synchronous: the
   * value and its includes were compiled and linked at load. Throws `PromptRenderError`.
   */
  render<K extends PodPrompt>(key: K, ...context: PodPromptContextArgs<K>): string {
    const winner = this.winner(key);
    try {
      return this.loader.environment.render(winner.template, (context[0] ?? {}) as Record<string, unknown>)
        .text;
    } catch (error) {
      throw new PromptRenderError(key, winner.layer, winner.file, error);
    }
  }

  /** The winning layer, file and template source of `key` (for `podkit prompt catalog --explain`). */
  explain(key: PodPrompt): PromptExplanation {
    const { layer, file, source } = this.winner(key);
    return { key, layer, file, source };
  }

  /** Every key in `PodPrompt` order with its winning layer and file. */
  entries(): PromptExplanation[] {
    return POD_PROMPTS.map((key) => this.explain(key));
  }

  private winner(key: string): Winner {
    const winner = isPodPrompt(key) ? this.winners.get(key) : undefined;
    if (!winner) throw new UnknownPromptKeyError(key, POD_PROMPTS);
    return winner;
  }
}

function templateName(entry: PromptPackEntry): string {
  return `[prompt].${entry.key} of the ${entry.layer} pack`;
}

function compileEntry(loader: PromptLoader, entry: PromptPackEntry): void {
  try {
    loader.environment.compile(templateName(entry), entry.source, entry.file);
  } catch (error) {
    if (!TemplateSyntaxError.isInstance(error)) throw error;
    throw new PromptCatalogError(
      `template syntax error: ${error.problem} (line ${error.line}, column ${error.column} of the value)`,
      { layer: entry.layer, file: entry.file, key: entry.key, line: entry.line },
      { cause: error, hint: "Fix the template in that value (nunjucks/Jinja2 syntax)." },
    );
  }
}

async function linkEntry(loader: PromptLoader, entry: PromptPackEntry): Promise<LinkedTemplate> {
  const compiled = loader.environment.compile(templateName(entry), entry.source, entry.file);
  try {
    return await loader.link(compiled, { file: entry.file });
  } catch (error) {
    const problem = TemplateSyntaxError.isInstance(error)
      ? `an included template does not compile: ${error.problem} in ${formatLocation(error)}`
      : PromptRefError.isInstance(error)
        ? `an include cannot be resolved: ${error.message}`
        : null;
    if (problem === null) throw error;
    throw new PromptCatalogError(
      problem,
      { layer: entry.layer, file: entry.file, key: entry.key, line: entry.line },
      { cause: error },
    );
  }
}

async function readPackFiles(loader: PromptLoader, options: PromptCatalogOptions): Promise<PackFile[]> {
  const builtinRoot = loader.roots.podkit;
  if (!builtinRoot) throw new PodUsageError("the prompt loader has no $podkit root (builtin resources)");
  const builtinFile = join(builtinRoot, "internal.toml");
  const builtin = await readBuiltinOnce(builtinFile, () => readOptional(builtinFile, "builtin"));
  if (builtin === null) {
    throw new PromptCatalogError("the builtin pack is missing (was the package built?)", {
      layer: "builtin",
      file: builtinFile,
    });
  }
  const packs: PackFile[] = [{ layer: "builtin", file: builtinFile, text: builtin }];
  const optional: [PromptLayer, string | null, string | null][] = [
    ["user", options.userConfigDir, options.userConfigDir && join(options.userConfigDir, "prompts.toml")],
    ["workspace", options.workspace, options.workspace && join(options.workspace, ".podkit", "prompts.toml")],
  ];
  for (const [layer, owner, file] of optional) {
    if (!owner || !file) continue;
    await refuseEscapingPack(layer, owner, file);
    const text = await readOptional(file, layer);
    if (text !== null) packs.push({ layer, file, text });
  }
  if (options.promptPack !== undefined)
    packs.push(await readManifestPack(loader, options.promptPack, options.manifestDir));
  return packs;
}

// A cloned repository may ship `.podkit` (or the pack itself) as a link to somewhere else.
async function refuseEscapingPack(layer: PromptLayer, owner: string, file: string): Promise<void> {
  const breach = await findRootEscape(owner, file);
  if (breach === null) return;
  throw new PromptCatalogError(
    `the pack is refused: ${describeRootEscape(breach)}`,
    { layer, file },
    { hint: `Make ${breach.link} a real file or directory inside ${breach.owner}, or remove the link.` },
  );
}

async function readOptional(file: string, layer: PromptLayer): Promise<string | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new PromptCatalogError(
      `cannot read the file: ${(error as Error).message}`,
      { layer, file },
      { cause: error },
    );
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    throw new PromptCatalogError("the file is not valid UTF-8", { layer, file }, { cause: error });
  }
}

async function readManifestPack(
  loader: PromptLoader,
  pack: string,
  manifestDir: string | undefined,
): Promise<PackFile> {
  const setting = `[pod].prompt_pack = ${JSON.stringify(pack)}`;
  if (pack.startsWith("$")) {
    try {
      const { file, text } = await loader.readText(loader.resolve(pack));
      return { layer: "manifest", file, text };
    } catch (error) {
      if (!PromptRefError.isInstance(error)) throw error;
      throw new PromptCatalogError(
        `${setting}: ${error.message}`,
        { layer: "manifest", file: pack },
        { cause: error },
      );
    }
  }
  if (!isAbsolute(pack) && !manifestDir) {
    throw new PromptCatalogError(`${setting} is relative but no manifest directory was given to resolve it`, {
      layer: "manifest",
      file: pack,
    });
  }
  const file = isAbsolute(pack) ? pack : resolve(manifestDir as string, pack);
  const text = await readOptional(file, "manifest");
  if (text === null) {
    throw new PromptCatalogError(
      `${setting}: the file does not exist`,
      { layer: "manifest", file },
      {
        hint: "Create the pack or fix [pod].prompt_pack (relative paths resolve against the manifest's directory).",
      },
    );
  }
  return { layer: "manifest", file, text };
}
