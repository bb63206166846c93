import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/pod", () => {
  it("exports what an application, a feature package or the CLI calls, and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "COMPACT_TOOL_NAMES",
      "CompactSummaryMissingError",
      "CompactSummaryOversizeError",
      "CompactionOverThresholdError",
      "HooksFrozenError",
      "InvalidPromptRefError",
      "InvalidSystemPromptTemplateError",
      "MemoryPackageInvalidError",
      "MemoryPackageMissingError",
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
      "SubpodSessionError",
      "SystemPromptRenderError",
      "SystemPromptTemplate",
      "TemplateEngineVersionError",
      "TemplateLimitError",
      "TemplateRenderError",
      "TemplateSyntaxError",
      "TemplateUnprintableValueError",
      "UnconfiguredPromptPrefixError",
      "UnknownPromptKeyError",
      "UnknownPromptPrefixError",
      "buildSystemPromptContext",
      "builtinPromptsDir",
      "estimateTokens",
      "isPodPrompt",
      "loadPodResources",
      "openSessionStore",
      "podModelAdapter",
      "readAgentsMd",
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
