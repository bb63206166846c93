import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/memory", () => {
  it("exports what apps and the CLI call, and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "MemoryEditError",
      "MemoryError",
      "MemoryFileRefusedError",
      "MemoryLintError",
      "MemoryRecordNotFoundError",
      "MemoryUsageError",
      "MemoryWorkerError",
      "RECORD_KINDS",
      "attachMemory",
      "formatDiagnostics",
      "lintMemory",
      "lintWorkspaceMemory",
      "queryWorkspaceMemory",
      "runMemoryConsolidation",
      "runMemoryExtract",
    ]);
    // The store, the tools, the record format, the lock and the input builders stay inside.
    for (const internal of [
      "MemoryStore",
      "consolidationTools",
      "joinRecord",
      "splitRecord",
      "memoryPaths",
      "loadMemoryFiles",
      "estimateTokens",
      "estimateSliceTokens",
      "memoryContextSection",
      "knowledgeCandidates",
    ]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });
});
