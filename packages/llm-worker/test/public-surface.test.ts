import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/llm-worker", () => {
  it("exports what a user calls and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "AbortedError",
      "CancelledError",
      "CompactionItemSchema",
      "ConfigurationError",
      "DEFAULT_API_KEY_ENV",
      "DEFAULT_INTERRUPTED_TOOL_SUMMARY",
      "DEFAULT_RETRY_POLICY",
      "DEFAULT_TOOL_OUTPUT_LIMITS",
      "ERROR_KINDS",
      "EmptyResponseError",
      "HistoryAppendError",
      "ItemSchema",
      "LlmWorkerError",
      "MEDIA_CAPABILITIES",
      "MEDIA_TYPES",
      "MalformedResponseError",
      "MediaNotFoundError",
      "MediaRefSchema",
      "MemoryMediaStore",
      "MessageItemSchema",
      "OLLAMA_DEFAULT_BASE_URL",
      "PROVIDERS",
      "ProviderError",
      "ProviderMetadataSchema",
      "ProviderToolCallItemSchema",
      "ProviderToolResultItemSchema",
      "REASONING_EFFORTS",
      "ReasoningItemSchema",
      "RequestConfigSchema",
      "TextPartSchema",
      "ToolCallItemSchema",
      "ToolError",
      "ToolResultItemSchema",
      "ToolServer",
      "Worker",
      "WorkerBusyError",
      "adapterFromModel",
      "createModelAdapter",
      "defineTool",
      "errorKindOf",
      "mediaCapabilities",
      "mediaLabel",
      "messageText",
      "parseModelRef",
      "sniffMedia",
      "textMessage",
      "unansweredToolCalls",
    ]);
    // Prompt conversion, retry timing and output capping stay inside the package.
    for (const internal of [
      "toV3Prompt",
      "planCacheBreakpoints",
      "buildProviderOptions",
      "backoffDelay",
      "capToolOutput",
      "planRequestMedia",
    ]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });
});
