import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/pod", () => {
  it("exports what an application, a feature package or the CLI calls, and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "CompactSummaryMissingError",
      "CompactSummaryOversizeError",
      "CompactionOverThresholdError",
      "HooksFrozenError",
      "InvalidPromptRefError",
      "InvalidSystemPromptTemplateError",
      "NOTIFICATION_CAPACITY",
      "NothingToCompactError",
      "POD_PROMPTS",
      "Pod",
      "PodBusyError",
      "PodClosedError",
      "PodUsageError",
      "PodkitPodError",
      "PromptCancelledError",
      "PromptCatalog",
      "PromptCatalogError",
      "PromptIoError",
      "PromptNotFoundError",
      "PromptRefError",
      "PromptRenderError",
      "PromptRootEscapeError",
      "RunHandle",
      "SessionStorePackageInvalidError",
      "SessionStorePackageMissingError",
      "SessionStoreUrlUnsetError",
      "SubpodRoleError",
      "SystemPromptRenderError",
      "SystemPromptTemplate",
      "TemplateEngineVersionError",
      "TemplateLimitError",
      "TemplateRenderError",
      "TemplateSyntaxError",
      "UnconfiguredPromptPrefixError",
      "UnknownPromptKeyError",
      "UnknownPromptPrefixError",
      "buildSystemPromptContext",
      "builtinPromptsDir",
      "entriesBeforeCorruption",
      "estimateTokens",
      "intactView",
      "isPodPrompt",
      "listSessionRows",
      "loadPodResources",
      "openSessionStore",
      "podModelAdapter",
      "readAgentsMd",
      "readSessionLine",
      "segmentOfFile",
      "sessionForest",
      "sessionRow",
      "summarizeEntries",
      "treeOf",
    ]);
    // The builtin notes section (a second `notes` would collide with it), the engine, the template
    // engine and the pod's internal constants stay inside the package.
    for (const internal of [
      "notesSection",
      "NOTES_FILE",
      "PodEngine",
      "TemplateEnvironment",
      "PromptLoader",
      "COMPACTION_BREAKER_LIMIT",
      "PROMPT_LAYERS",
      "DEFAULT_RENDER_LIMITS",
      "TELEMETRY_SCOPE",
      "bytesOfItems",
      "processWarningSink",
    ]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });
});
