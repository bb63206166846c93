import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/testkit", () => {
  it("exports the provider double, recordings, the cache simulator and the errors, none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "ERROR_KINDS",
      "ListenError",
      "NO_RESPONSE_LEFT",
      "OptionsError",
      "RECORDINGS_DIR",
      "RecordingError",
      "ScriptError",
      "TestkitError",
      "loadRecordedChunks",
      "mcpServerDoubleCommand",
      "requestMedia",
      "simulatePromptCache",
      "startMcpServerDouble",
      "startProviderDouble",
    ]);
    // The wire writers, the SSE framing and the script validation stay inside the package.
    for (const internal of [
      "formatSseEvent",
      "renderScript",
      "validateScriptedResponse",
      "framesForRecordedChunks",
      "McpDoubleCore",
      "generatedTools",
      "serveStdioDouble",
    ]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });
});
