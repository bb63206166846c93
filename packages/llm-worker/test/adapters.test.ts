import { describe, expect, it } from "vitest";
import {
  ConfigurationError,
  createModelAdapter,
  OLLAMA_DEFAULT_BASE_URL,
  parseModelRef,
  Worker,
} from "../src/index.js";
import { startDouble } from "./helpers.js";

function configError(fn: () => unknown): ConfigurationError {
  try {
    fn();
  } catch (error) {
    if (ConfigurationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a ConfigurationError");
}

describe("model adapters from refs", () => {
  it("rejects a ref without a known provider, saying what a ref looks like", () => {
    expect(configError(() => parseModelRef("claude-sonnet")).message).toMatch(
      /invalid model ref "claude-sonnet": expected "<provider>\/<model id>"/,
    );
    expect(configError(() => parseModelRef("azure/gpt")).message).toMatch(
      /provider one of anthropic, openai/,
    );
    expect(parseModelRef("openai-compatible/meta-llama/Llama-3-8B")).toEqual({
      provider: "openai-compatible",
      modelId: "meta-llama/Llama-3-8B",
    });
  });

  it("answers a missing ref or model with a ConfigurationError, never a bare TypeError", () => {
    expect(configError(() => createModelAdapter(undefined as never)).message).toMatch(/must be a string/);
    expect(configError(() => new Worker({} as never)).message).toMatch(/needs a model adapter/);
    expect(
      configError(() => new Worker({ model: createModelAdapter("ollama/x"), maxRequests: 0 })).message,
    ).toMatch(/maxRequests must be an integer ≥ 1 \(got 0\)/);
  });

  it("names the environment variable when the API key is missing", () => {
    expect(configError(() => createModelAdapter("anthropic/claude-sonnet-4-5", { env: {} })).message).toMatch(
      /set the environment variable ANTHROPIC_API_KEY/,
    );
    expect(configError(() => createModelAdapter("google/gemini-2.5-pro", { env: {} })).message).toMatch(
      /GOOGLE_GENERATIVE_AI_API_KEY/,
    );
    expect(
      configError(() =>
        createModelAdapter("openai/gpt-5", { env: { OPENAI_API_KEY: "" }, apiKeyEnv: "WORK_OPENAI_KEY" }),
      ).message,
    ).toMatch(/WORK_OPENAI_KEY/);
  });

  it("requires a base URL for openai-compatible and defaults ollama to the local server without a key", () => {
    expect(configError(() => createModelAdapter("openai-compatible/x", { env: {} })).message).toMatch(
      /needs a base URL: set \[model\] base_url/,
    );
    expect(OLLAMA_DEFAULT_BASE_URL).toBe("http://127.0.0.1:11434/v1");
    expect(createModelAdapter("ollama/llama3.2", { env: {} })).toMatchObject({
      provider: "ollama",
      modelId: "llama3.2",
    });
  });

  it("sends the key read from the injected environment, not process.env", async () => {
    const double = await startDouble("anthropic");
    double.enqueue({ parts: [{ type: "text", text: "hi" }] });
    const worker = new Worker({
      model: createModelAdapter("anthropic/claude-haiku-4-5", {
        env: { ANTHROPIC_API_KEY: "key-from-injected-env" },
        baseUrl: double.baseUrl,
      }),
    });
    await worker.run("hello");
    expect(double.requests[0]?.headers["x-api-key"]).toBe("key-from-injected-env");
    expect(double.requests[0]?.body.model).toBe("claude-haiku-4-5");
  });

  it("openai-compatible talks Chat Completions to the given base URL with a model id containing slashes", async () => {
    const double = await startDouble("openai-chat");
    double.enqueue({ parts: [{ type: "text", text: "served" }] });
    const worker = new Worker({
      model: createModelAdapter("openai-compatible/meta-llama/Llama-3-8B", {
        env: { VLLM_KEY: "vllm-secret" },
        apiKeyEnv: "VLLM_KEY",
        baseUrl: double.baseUrl,
      }),
    });
    const result = await worker.run("hello");
    expect(result.text).toBe("served");
    expect(double.requests[0]?.body).toMatchObject({
      model: "meta-llama/Llama-3-8B",
      stream_options: { include_usage: true },
    });
    expect(double.requests[0]?.headers.authorization).toBe("Bearer vllm-secret");
  });

  it("sends OpenAI's prompt_cache_key as the settable session id", async () => {
    const double = await startDouble("openai-responses");
    double.enqueue({ parts: [{ type: "text", text: "a" }] }, { parts: [{ type: "text", text: "b" }] });
    const worker = new Worker({
      model: createModelAdapter("openai/gpt-5", { apiKey: "k", baseUrl: double.baseUrl }),
      cache: { promptCacheKey: "session-0001" },
    });
    await worker.run("one");
    worker.setPromptCacheKey("session-0002");
    await worker.run("two");
    expect(double.requests.map((r) => r.body.prompt_cache_key)).toEqual(["session-0001", "session-0002"]);
  });
});
