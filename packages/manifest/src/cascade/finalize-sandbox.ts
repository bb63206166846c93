import { SANDBOX_DEFAULTS } from "../defaults.js";
import type { SandboxConfig, ToolsConfig } from "../resolved-manifest.js";
import type { ManifestLayerData } from "../schema/layer-schema.js";

/**
 * `[sandbox]` after the cascade: the OS backend unless a layer says `none`; no network unless
 * `[sandbox.network] allow` names hosts (a plain list: the topmost layer that sets it wins, so a
 * workspace can narrow what the user's layer allows); and `fail_if_unavailable`, when unset, on
 * exactly when bash is: a pod whose model may run shell commands never starts without its sandbox
 * unless a layer says so (docs/sandbox.md).
 */
export function finalizeSandbox(
  merged: ManifestLayerData,
  tools: ToolsConfig,
  fromBuiltin: (keyPath: string, note?: string) => void,
): SandboxConfig {
  const set = merged.sandbox ?? {};
  if (set.backend === undefined) fromBuiltin("sandbox.backend");
  if (set.fail_if_unavailable === undefined)
    fromBuiltin("sandbox.fail_if_unavailable", tools.bash ? "[tools] bash is on" : "[tools] bash is off");
  if (set.network?.allow === undefined) fromBuiltin("sandbox.network.allow", "no network");
  return {
    backend: set.backend ?? SANDBOX_DEFAULTS.backend,
    fail_if_unavailable: set.fail_if_unavailable ?? tools.bash,
    network: { allow: [...new Set((set.network?.allow ?? SANDBOX_DEFAULTS.network_allow).map(lower))] },
  };
}

function lower(host: string): string {
  return host.toLowerCase();
}
