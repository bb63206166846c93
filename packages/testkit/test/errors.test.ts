import { describe, expect, it } from "vitest";
import { describeErrorScheme } from "../../../test-support/error-scheme.js";
import * as api from "../src/index.js";

/** One instance of every public error class, each made the way the testkit makes it. */
const samples: Record<string, () => Promise<Error>> = {
  TestkitError: async () => new api.TestkitError("base"),
  ScriptError: async () => {
    const double = await api.startProviderDouble({ wire: "anthropic" });
    try {
      double.enqueue({ parts: [{ type: "text", text: "x", chunkSize: 0 }] });
    } catch (error) {
      return error as Error;
    } finally {
      await double.close();
    }
    throw new Error("a chunkSize of 0 was accepted");
  },
  OptionsError: () =>
    api
      .startProviderDouble({ wire: "smoke-signals" as never })
      .then(() => new Error("accepted"))
      .catch((e: Error) => e),
  ListenError: async () => {
    const first = await api.startProviderDouble({ wire: "anthropic" });
    const port = Number(new URL(first.origin).port);
    const error = await api.startProviderDouble({ wire: "anthropic", port }).then(
      async (second) => {
        await second.close();
        return new Error("two doubles listened on one port");
      },
      (e: Error) => e,
    );
    await first.close();
    return error;
  },
  RecordingError: async () => {
    try {
      api.loadRecordedChunks("/nonexistent/recording.chunks.txt");
    } catch (error) {
      return error as Error;
    }
    return new Error("a missing recording was read");
  },
};

describeErrorScheme("testkit", api, samples, {
  TestkitError: "usage",
  ScriptError: "usage",
  OptionsError: "usage",
  ListenError: "conflict",
  RecordingError: "usage",
});

describe("testkit errors", () => {
  it("answers missing arguments with an OptionsError, never a bare TypeError", async () => {
    const missing = await api.startProviderDouble(undefined as never).catch((e: unknown) => e);
    expect(api.OptionsError.isInstance(missing)).toBe(true);
    expect(() => api.simulatePromptCache(undefined as never, "anthropic")).toThrow(api.OptionsError);
  });
});
