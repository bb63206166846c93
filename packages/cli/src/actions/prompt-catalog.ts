import { existsSync } from "node:fs";
import { findWorkspace, loadManifest, userConfigDir, workspaceManifestPath } from "@podkit/manifest";
import {
  isPodPrompt,
  loadPodResources,
  POD_PROMPTS,
  type PodPrompt,
  type PodWarning,
  type PromptCatalog,
  type PromptExplanation,
} from "@podkit/pod";
import type { CommandContext, CommandInput } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";
import { displayPath } from "../render/display-path.js";

/** `podkit prompt catalog [key] [--explain] [--manifest <file>]` */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const key = input.positionals[0];
  if (key !== undefined && !isPodPrompt(key)) {
    throw new PodkitCliError(`unknown prompt key "${key}"`, {
      hint: `known keys: ${POD_PROMPTS.join(", ")}`,
    });
  }
  const catalog = await loadCatalog(input, ctx);
  const explain = input.values.explain === true;
  if (input.values.json === true) {
    ctx.io.stdout.write(`${JSON.stringify(catalogJson(catalog, key, explain), null, 2)}\n`);
  } else if (key !== undefined) {
    const entry = catalog.explain(key);
    ctx.io.stdout.write(explain ? explanation(entry, ctx) : withNewline(entry.source));
  } else if (explain) {
    ctx.io.stdout.write(
      catalog
        .entries()
        .map((entry) => explanation(entry, ctx))
        .join("\n"),
    );
  } else {
    ctx.io.stdout.write(listing(catalog.entries(), ctx));
  }
  return 0;
}

async function loadCatalog(input: CommandInput, ctx: CommandContext): Promise<PromptCatalog> {
  const workspace = findWorkspace(ctx.env);
  const file = typeof input.values.manifest === "string" ? input.values.manifest : undefined;
  const source =
    file !== undefined || existsSync(workspaceManifestPath(workspace))
      ? await loadManifest({ file, env: ctx.env })
      : { workspace, userConfigDir: userConfigDir(ctx.env) };
  const { catalog } = await loadPodResources(source, {
    onWarning: (warning: PodWarning) => ctx.io.stderr.write(`warning: ${warning.message}\n`),
  });
  return catalog;
}

/**
 * `--json`: one object per key with the layer and file (absolute) that supplied it, plus the
 * template source with --explain; with [key], that key's object, always with its source (the
 * text form prints the source for a key too).
 */
function catalogJson(catalog: PromptCatalog, key: PodPrompt | undefined, explain: boolean) {
  const shown = (entry: PromptExplanation, withSource: boolean) => ({
    key: entry.key,
    layer: entry.layer,
    file: entry.file,
    ...(withSource ? { source: entry.source } : {}),
  });
  if (key !== undefined) return shown(catalog.explain(key), true);
  return catalog.entries().map((entry) => shown(entry, explain));
}

function listing(entries: readonly PromptExplanation[], ctx: CommandContext): string {
  const keyWidth = Math.max(...entries.map((e) => e.key.length));
  const lines = entries.map(
    (e) => `${e.key.padEnd(keyWidth)}  ${e.layer.padEnd(9)}  ${displayPath(e.file, ctx.env)}`,
  );
  return `${lines.join("\n")}\n`;
}

function explanation(entry: PromptExplanation, ctx: CommandContext): string {
  return [
    `key:    ${entry.key}`,
    `layer:  ${entry.layer}`,
    `file:   ${displayPath(entry.file, ctx.env)}`,
    "source:",
    withNewline(entry.source),
  ].join("\n");
}

function withNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}
