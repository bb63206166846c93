import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  findWorkspace,
  type LoadedManifest,
  loadManifest,
  type ManifestLayer,
  workspaceManifestPath,
} from "@podkit/manifest";
import { type CommandContext, type CommandInput, stringList } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";
import { displayPath } from "../render/display-path.js";
import { provenanceLabel, renderManifestText } from "../render/manifest-text.js";

/** `podkit manifest show [file] [--set key=value]... [--json]` */
export async function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const loaded = await loadManifest({
    file: fileArgument(input, ctx),
    overlays: stringList(input.values.set),
    env: ctx.env,
  });
  ctx.io.stdout.write(
    input.values.json === true ? `${JSON.stringify(toJson(loaded), null, 2)}\n` : `${toText(loaded, ctx)}\n`,
  );
  return 0;
}

function fileArgument(input: CommandInput, ctx: CommandContext): string | undefined {
  const file = input.positionals[0];
  if (file !== undefined) return file;
  const workspace = findWorkspace(ctx.env);
  if (existsSync(workspaceManifestPath(workspace))) return undefined;
  throw new PodkitCliError(`no manifest file given, and ${workspaceManifestPath(workspace)} does not exist`, {
    hint: "pass one (podkit manifest show path/to/manifest.toml) or create .podkit/manifest.toml in the workspace",
  });
}

function toText(loaded: LoadedManifest, ctx: CommandContext): string {
  const shown = (path: string) => displayPath(path, ctx.env);
  const lines: string[] = [];
  const title = loaded.file ? shown(loaded.file) : "workspace manifest";
  const found = existsSync(join(loaded.workspace, ".podkit"));
  const how = found ? "nearest directory holding .podkit/" : "no .podkit/ found above the cwd, so the cwd";
  lines.push(
    `Pod "${loaded.manifest.pod.name}" from ${title}`,
    `Workspace: ${loaded.workspace} (${how})`,
    "",
  );
  lines.push("Layers, lowest first (a later layer wins; rule lists accumulate):");
  for (const layer of loaded.layers) lines.push(`  ${layerLine(layer, shown)}`);
  lines.push("", "Resolved manifest (# the layer that set each value, with its line):", "");
  lines.push(renderManifestText(loaded.manifest, provenanceLabel(loaded.provenance)));
  lines.push("", "Scope (canonical paths; this summary is what the system prompt shows):");
  const summary = loaded.scope.summary;
  lines.push(
    summary === "" ? "  nothing is readable or writable (no [[scope.allow]] rules)" : indent(summary, "  "),
  );
  if (loaded.manifest.scope.deny.length > 0) {
    lines.push("  Denied:");
    for (const rule of loaded.manifest.scope.deny) {
      lines.push(
        `    - ${rule.target}${rule.recursive ? "" : " [non-recursive]"} (${rule.permission === "read" ? "no access" : "read only"})`,
      );
    }
  }
  lines.push("", modelLine(loaded, ctx));
  return lines.join("\n");
}

function layerLine(layer: ManifestLayer, shown: (path: string) => string): string {
  const name = layer.kind.padEnd(10);
  if (layer.kind === "builtin") return `${name}embedded defaults`;
  if (layer.kind === "set") return `${name}--set ${layer.overlay ?? ""}`;
  const state = layer.present ? "" : `  (${layer.note ?? "not found, skipped"})`;
  return `${name}${shown(layer.file ?? "")}${state}`;
}

function modelLine(loaded: LoadedManifest, ctx: CommandContext): string {
  const { ref, api_key_env: keyEnv } = loaded.manifest.model;
  if (keyEnv === undefined) return `Model: ${ref} (no API key variable; a local server)`;
  const state = ctx.io.env[keyEnv] ? "set" : "not set (needed only to call the model)";
  return `Model: ${ref}; API key from $${keyEnv}: ${state}`;
}

function indent(text: string, by: string): string {
  return text
    .split("\n")
    .map((line) => by + line)
    .join("\n");
}

function toJson(loaded: LoadedManifest) {
  const provenance: Record<
    string,
    { layer: string; file?: string; overlay?: string; line?: number; keyPath: string }
  > = {};
  for (const [key, source] of loaded.provenance) {
    provenance[key] = {
      layer: source.layer.kind,
      ...(source.layer.file !== undefined ? { file: source.layer.file } : {}),
      ...(source.layer.overlay !== undefined ? { overlay: source.layer.overlay } : {}),
      ...(source.line !== undefined ? { line: source.line } : {}),
      keyPath: source.keyPath,
    };
  }
  return {
    file: loaded.file ?? null,
    workspace: loaded.workspace,
    layers: loaded.layers,
    manifest: loaded.manifest,
    provenance,
    scope: {
      readable: loaded.scope.readable,
      writable: loaded.scope.writable,
      summary: loaded.scope.summary,
    },
  };
}
