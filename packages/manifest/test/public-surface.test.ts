import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/manifest", () => {
  it("exports what a user calls and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "BUILTIN_TOOL_NAMES",
      "COMPACTION_DEFAULTS",
      "ERROR_KINDS",
      "MEDIA_DEFAULTS",
      "MEMORY_DEFAULTS",
      "ManifestError",
      "OUTPUT_DEFAULTS",
      "OUTPUT_STRATEGIES",
      "PERMISSION_MODES",
      "PROMPT_PREFIXES",
      "PROVIDERS",
      "PodkitManifestError",
      "READ_TOOLS",
      "REASONING_EFFORTS",
      "SKILLS_DEFAULTS",
      "SKILL_NAME_PATTERN",
      "SKILL_OVER_BUDGET_ACTIONS",
      "SUBPOD_DEFAULTS",
      "Scope",
      "ScopeError",
      "TOOLS_DEFAULTS",
      "WorkspaceNotFoundError",
      "checkOutputSchema",
      "compileJsonSchema",
      "defaultApiKeyEnv",
      "defaultCompactionConfig",
      "findWorkspace",
      "formatKeyPath",
      "jsonSyntaxProblem",
      "loadManifest",
      "safeParseModelRef",
      "spellPromptRef",
      "userConfigDir",
      "userStateDir",
      "workspaceDataDir",
      "workspaceManifestPath",
    ]);
    // The cascade's steps, the TOML reader and the schema stay inside the package.
    for (const internal of [
      "parseLayerSource",
      "parseToml",
      "KeyLocator",
      "manifestLayerSchema",
      "parseModelRef",
    ]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });
});
