import { existsSync } from "node:fs";
import { findWorkspace, type LoadedManifest, loadManifest, workspaceManifestPath } from "@podkit/manifest";
import { type CommandContext, type CommandInput, stringList, stringOption } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";

/**
 * The manifest of the pod a command works with: `--manifest <file>` (with `--set` overlays), else
 * the workspace's `.podkit/manifest.toml`. No manifest at all is a one-line error pointing at
 * `podkit init`.
 */
export async function loadPodManifest(input: CommandInput, ctx: CommandContext): Promise<LoadedManifest> {
  const file = stringOption(input.values.manifest);
  if (file === undefined) {
    const workspaceFile = workspaceManifestPath(findWorkspace(ctx.env));
    if (!existsSync(workspaceFile)) {
      throw new PodkitCliError(`no manifest: ${workspaceFile} does not exist and no --manifest was given`, {
        hint: "run `podkit init` here to create one, or pass --manifest path/to/manifest.toml (`podkit demo` needs none)",
      });
    }
  }
  return loadManifest({ file, overlays: stringList(input.values.set), env: ctx.env });
}

/**
 * Fails before anything is written when the model needs an API key that is not set; the message
 * names the variable (llm-worker would fail the same way, but only at the first request).
 */
export function checkApiKey(loaded: LoadedManifest, env: Readonly<Record<string, string | undefined>>): void {
  const { ref, api_key_env: variable } = loaded.manifest.model;
  if (variable === undefined || (env[variable] ?? "") !== "") return;
  throw new PodkitCliError(`no API key for model "${ref}": the environment variable ${variable} is not set`, {
    hint: `export ${variable}=<your key> and run again (or point [model] api_key_env at the variable that holds it); \`podkit demo\` runs without a key`,
  });
}
