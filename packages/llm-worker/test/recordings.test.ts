import { readdirSync } from "node:fs";
import { join } from "node:path";
import { loadRecordedChunks, RECORDINGS_DIR, type Wire } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { ItemSchema, ProviderError } from "../src/index.js";
import { FAST_RETRY, startDouble, workerFor } from "./helpers.js";

const ROOT = RECORDINGS_DIR;

/** Recordings that must end in a typed error; every other one must finish. */
const EXPECTED_ERRORS: Record<string, RegExp> = {
  // An `error` event (insufficient_quota) instead of a response.
  "openai-error.1.chunks.txt": /HTTP 429: You exceeded your current quota/,
  // Event shapes newer than the pinned @ai-sdk/openai: it rejects them, the worker reports a malformed frame.
  "parallel-tool-call-wrapper.1.chunks.txt":
    /could not read \(a stream frame that is not the expected JSON\)/,
};

const cases = (["anthropic", "openai-chat", "openai-responses", "google"] as Wire[]).flatMap((wire) =>
  readdirSync(join(ROOT, wire))
    .filter((file) => file.endsWith(".chunks.txt"))
    .map((file) => [wire, file] as const),
);

describe("recorded provider streams replayed over HTTP", () => {
  it.each(cases)("%s %s: finishes, or fails with the expected typed error", async (wire, file) => {
    const double = await startDouble(wire);
    // Recordings that call tools get an error result (no such tool here) and then a scripted final answer.
    double.enqueue(
      { chunks: loadRecordedChunks(join(ROOT, wire, file)) },
      { parts: [{ type: "text", text: "ok" }] },
    );
    const { worker, persisted } = workerFor(double, { retry: { ...FAST_RETRY, maxAttempts: 1 } });

    const outcome = await worker.run("replay").then(
      (result) => ({ result, error: undefined }),
      (error: unknown) => ({ result: undefined, error }),
    );

    const expectedError = EXPECTED_ERRORS[file];
    if (expectedError) {
      expect(ProviderError.isInstance(outcome.error)).toBe(true);
      expect((outcome.error as Error).message).toMatch(expectedError);
    } else {
      expect(outcome.error).toBeUndefined();
      expect(outcome.result?.status).toBe("finished");
    }
    // Whatever was committed is valid item JSON, so a session log of it replays.
    for (const item of persisted) expect(ItemSchema.parse(item)).toEqual(item);
  });
});
