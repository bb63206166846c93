import { isPodErrorNamed, PodkitPodError } from "../errors.js";

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

/** A prompt pack cannot be used: bad TOML, a non-string value, a template that fails to compile. */
export class PromptCatalogError extends PodkitPodError {
  override name = "PromptCatalogError";
  readonly layer: PromptLayer;
  readonly file: string;
  readonly key: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(problem: string, site: CatalogSite, options?: { cause?: unknown; hint?: string }) {
    super(`${siteText(site)}: ${problem}`, options);
    this.layer = site.layer;
    this.file = site.file;
    this.key = site.key;
    this.line = site.line;
    this.column = site.column;
  }

  static override isInstance(error: unknown): error is PromptCatalogError {
    return isPodErrorNamed(error, ["PromptCatalogError"]);
  }
}

/** `catalog.render(key, …)` failed; `cause` is the `TemplateRenderError`. */
export class PromptRenderError extends PodkitPodError {
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
    return isPodErrorNamed(error, ["PromptRenderError"]);
  }
}
