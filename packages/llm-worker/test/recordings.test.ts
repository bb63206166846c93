import { readdirSync } from "node:fs";
import { join } from "node:path";
import { loadRecordedChunks, type Wire } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { ItemSchema, LlmWorkerError } from "../src/index.js";
import { recordingTool, startDouble, toolServer, workerFor } from "./helpers.js";

const ROOT = join(import.meta.dirname, "../../../../shared/fixtures/provider-recordings");
const cases = (["anthropic", "openai-chat", "openai-responses", "google"] as Wire[]).flatMap((wire) =>
  readdirSync(join(ROOT, wire))
    .filter((file) => file.endsWith(".chunks.txt"))
    .map((file) => [wire, file] as const),
);

describe("recorded provider streams replayed over HTTP", () => {
  it.each(cases)("%s %s: ends in a result or a typed error, never a crash", async (wire, file) => {
    const double = await startDouble(wire);
    double.enqueue({ chunks: loadRecordedChunks(join(ROOT, wire, file)) });
    // Recordings that call tools get an answer, then the follow-up request finds the queue empty (HTTP 500).
    const { worker, persisted } = workerFor(double, {
      retry: { maxAttempts: 1 },
      tools: toolServer(recordingTool("unused").tool),
    });

    const outcome = await worker.run("replay").then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );

    if ("error" in outcome) {
      expect(LlmWorkerError.isInstance(outcome.error)).toBe(true);
    } else {
      expect(outcome.result.status).toBe("finished");
    }
    // Whatever was committed is valid item JSON, so a session log of it replays.
    for (const item of persisted) expect(ItemSchema.parse(item)).toEqual(item);
  });
});
