import { hasMarker, PodkitPodError } from "../errors.js";

/** The four layers of the catalog, lowest first. */
export const PROMPT_LAYERS = ["builtin", "user", "workspace", "manifest"] as const;
export type PromptLayer = (typeof PROMPT_LAYERS)[number];

/** Where a catalog problem sits: layer, pack file, and (when known) key and line. */
export interface CatalogSite {
  readonly layer: PromptLayer;
  readonly file: string;
  readonly key?: string;
  readonly line?: number;
  readonly column?: number;
}

function siteText(site: CatalogSite): string {
  const at =
    site.line === undefined ? "" : `:${site.line}${site.column === undefined ? "" : `:${site.column}`}`;
  const key = site.key === undefined ? "" : `, key [prompt].${site.key}`;
  return `${site.layer} prompt pack ${site.file}${at}${key}`;
}

const PROMPT_CATALOG_MARKER = Symbol.for("podkit.pod.error.prompt-catalog");

/** A prompt pack cannot be used: bad TOML, a non-string value, a template that fails to compile. */
export class PromptCatalogError extends PodkitPodError {
  readonly [PROMPT_CATALOG_MARKER] = true;
  override name = "PromptCatalogError";
  readonly layer: PromptLayer;
  readonly file: string;
  readonly key: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(problem: string, site: CatalogSite, options?: { cause?: unknown; hint?: string }) {
    super(`${siteText(site)}: ${problem}`, {
      ...options,
      hint:
        options?.hint ??
        "fix the prompt pack named above; `podkit prompt catalog --explain` shows each layer's values",
    });
    this.layer = site.layer;
    this.file = site.file;
    this.key = site.key;
    this.line = site.line;
    this.column = site.column;
  }

  static override isInstance(error: unknown): error is PromptCatalogError {
    return hasMarker(error, PROMPT_CATALOG_MARKER);
  }
}

const PROMPT_RENDER_MARKER = Symbol.for("podkit.pod.error.prompt-render");

/** `catalog.render(key, …)` failed; `cause` is the `TemplateRenderError`. */
export class PromptRenderError extends PodkitPodError {
  readonly [PROMPT_RENDER_MARKER] = true;
  override name = "PromptRenderError";
  readonly key: string;
  readonly layer: PromptLayer;
  readonly file: string;

  constructor(key: string, layer: PromptLayer, file: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`cannot render prompt ${key} (from the ${layer} prompt pack ${file}): ${why}`, {
      cause,
      hint: `Fix [prompt].${key} in ${file}, or remove it there to fall back to the layer below.`,
    });
    this.key = key;
    this.layer = layer;
    this.file = file;
  }

  static override isInstance(error: unknown): error is PromptRenderError {
    return hasMarker(error, PROMPT_RENDER_MARKER);
  }
}

const UNKNOWN_PROMPT_KEY_MARKER = Symbol.for("podkit.pod.error.unknown-prompt-key");

/** A key outside `PodPrompt` was asked of the catalog (only possible from untyped callers). */
export class UnknownPromptKeyError extends PodkitPodError {
  readonly [UNKNOWN_PROMPT_KEY_MARKER] = true;
  override name = "UnknownPromptKeyError";
  readonly key: string;

  constructor(key: string, known: readonly string[]) {
    super(`unknown prompt key ${JSON.stringify(key)}`, { hint: `known keys: ${known.join(", ")}` });
    this.key = key;
  }

  static override isInstance(error: unknown): error is UnknownPromptKeyError {
    return hasMarker(error, UNKNOWN_PROMPT_KEY_MARKER);
  }
}
