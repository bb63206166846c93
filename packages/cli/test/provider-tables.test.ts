import * as worker from "@podkit/llm-worker";
import * as manifest from "@podkit/manifest";
import { describe, expect, it } from "vitest";

// The manifest validates what the worker will be asked to do, and each keeps its own table (the
// manifest depends on no other podkit package). These tests hold the two copies together: a
// provider, effort or key variable added to one side only fails here.
describe("manifest and llm-worker agree on providers and reasoning efforts", () => {
  it("name the same providers in the same order", () => {
    expect([...manifest.PROVIDERS]).toEqual([...worker.PROVIDERS]);
  });

  it("accept the same reasoning efforts", () => {
    expect([...manifest.REASONING_EFFORTS]).toEqual([...worker.REASONING_EFFORTS]);
  });

  it("read a provider's key from the same default variable", () => {
    for (const provider of manifest.PROVIDERS) {
      expect(manifest.defaultApiKeyEnv(provider), provider).toBe(worker.DEFAULT_API_KEY_ENV[provider]);
    }
  });

  it("split and refuse the same model refs", () => {
    const refs = [
      "anthropic/claude-sonnet-4-5",
      "openai-compatible/meta-llama/Llama-3.3-70B",
      "ollama/qwen3:8b",
      "google/gemini-2.5-pro",
      "openai-chat/gpt-4o",
      "anthropic/",
      "anthropic/  ",
      "/claude",
      "claude-sonnet-4-5",
      "azure/gpt-4o",
      "",
    ];
    for (const ref of refs) {
      const fromManifest = manifest.safeParseModelRef(ref);
      let fromWorker: unknown;
      try {
        fromWorker = worker.parseModelRef(ref);
      } catch (error) {
        expect(worker.ConfigurationError.isInstance(error), ref).toBe(true);
        fromWorker = { problem: true };
      }
      if ("problem" in fromManifest) expect(fromWorker, ref).toEqual({ problem: true });
      else expect(fromWorker, ref).toEqual(fromManifest);
    }
  });
});
