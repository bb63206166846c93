import type { LanguageModelV3 } from "@ai-sdk/provider";
import { ConfigurationError } from "../errors.js";
import { type ModelAdapter, PROVIDERS, type ProviderName } from "./model-adapter.js";

/** Where an adapter gets its key, base URL and transport. Everything is injectable for tests. */
export interface ModelAdapterOptions {
  /** Environment to read API keys from (default: `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Overrides the provider's default endpoint; required for `openai-compatible/…`. */
  baseUrl?: string;
  /** Used instead of reading the environment. */
  apiKey?: string;
  /** The variable to read the key from instead of the provider's default. */
  apiKeyEnv?: string;
  /** A custom `fetch` (e.g. a proxy-aware one). */
  fetch?: typeof globalThis.fetch;
  /** Extra HTTP headers on every request. */
  headers?: Record<string, string>;
}

/** The default API key variable of each provider; `undefined` means no key is needed. */
export const DEFAULT_API_KEY_ENV: Readonly<Record<ProviderName, string | undefined>> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  "openai-chat": "OPENAI_API_KEY",
  google: "GOOGLE_GENERATIVE_AI_API_KEY",
  ollama: undefined,
  "openai-compatible": undefined,
};

export const OLLAMA_DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1";

/**
 * Splits `"<provider>/<model id>"` (the model id may itself contain slashes) and throws a
 * `ConfigurationError` for a ref it cannot use. `@podkit/manifest`'s `safeParseModelRef` accepts
 * the same refs and returns the problem instead of throwing.
 */
export function parseModelRef(ref: string): { provider: ProviderName; modelId: string } {
  if (typeof ref !== "string") {
    throw new ConfigurationError(
      `a model ref must be a string "<provider>/<model id>" (e.g. "anthropic/claude-sonnet-4-5"), got ${typeof ref}`,
    );
  }
  const slash = ref.indexOf("/");
  const provider = slash > 0 ? ref.slice(0, slash) : "";
  const modelId = slash > 0 ? ref.slice(slash + 1) : "";
  if (!(PROVIDERS as readonly string[]).includes(provider) || modelId.trim() === "") {
    throw new ConfigurationError(
      `invalid model ref "${ref}": expected "<provider>/<model id>" with provider one of ${PROVIDERS.join(", ")} (e.g. "anthropic/claude-sonnet-4-5")`,
    );
  }
  return { provider: provider as ProviderName, modelId };
}

function resolveApiKey(
  provider: ProviderName,
  ref: string,
  options: ModelAdapterOptions,
): string | undefined {
  if (options.apiKey !== undefined) return options.apiKey;
  const variable = options.apiKeyEnv ?? DEFAULT_API_KEY_ENV[provider];
  if (variable === undefined) return undefined;
  const value = (options.env ?? process.env)[variable];
  if (value === undefined || value === "") {
    throw new ConfigurationError(
      `no API key for model "${ref}": set the environment variable ${variable} (or [model] api_key_env to name another variable)`,
    );
  }
  return value;
}

/**
 * Builds a model adapter from a manifest model ref (`anthropic/…`, `openai/…` (Responses API),
 * `openai-chat/…` (Chat Completions), `google/…`, `ollama/…`, `openai-compatible/…`). The API
 * key is resolved now, so a missing key fails at construction with the variable's name; the
 * provider package is imported only when the model is first used.
 */
export function createModelAdapter(ref: string, options: ModelAdapterOptions = {}): ModelAdapter {
  const { provider, modelId } = parseModelRef(ref);
  const apiKey = resolveApiKey(provider, ref, options);
  const baseURL = options.baseUrl ?? (provider === "ollama" ? OLLAMA_DEFAULT_BASE_URL : undefined);
  if (provider === "openai-compatible" && baseURL === undefined) {
    throw new ConfigurationError(
      `model "${ref}" needs a base URL: set [model] base_url to the server's OpenAI-compatible endpoint (e.g. "http://127.0.0.1:8000/v1")`,
    );
  }
  const common = { apiKey, baseURL, fetch: options.fetch, headers: options.headers };
  let loaded: Promise<LanguageModelV3> | undefined;
  const load = (): Promise<LanguageModelV3> => {
    loaded ??= loadModel(provider, modelId, common);
    return loaded;
  };
  switch (provider) {
    case "anthropic":
      return adapter(provider, modelId, "anthropic", false, "anthropic", "anthropic", load);
    case "openai":
      return adapter(provider, modelId, "openai", true, "openai", "openai-responses", load);
    case "openai-chat":
      return adapter(provider, modelId, "openai", true, "openai", "openai-chat", load);
    case "google":
      return adapter(provider, modelId, "google", false, "none", "google", load);
    case "ollama":
    case "openai-compatible":
      return adapter(provider, modelId, provider, false, "none", "openai-compatible", load);
  }
}

function adapter(
  provider: ProviderName,
  modelId: string,
  providerOptionsKey: string,
  midHistorySystemRole: boolean,
  cacheStyle: ModelAdapter["cacheStyle"],
  reasoningStyle: ModelAdapter["reasoningStyle"],
  load: () => Promise<LanguageModelV3>,
): ModelAdapter {
  return { provider, modelId, providerOptionsKey, midHistorySystemRole, cacheStyle, reasoningStyle, load };
}

interface CommonSettings {
  apiKey: string | undefined;
  baseURL: string | undefined;
  fetch: typeof globalThis.fetch | undefined;
  headers: Record<string, string> | undefined;
}

async function loadModel(
  provider: ProviderName,
  modelId: string,
  s: CommonSettings,
): Promise<LanguageModelV3> {
  switch (provider) {
    case "anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({ apiKey: s.apiKey, baseURL: s.baseURL, fetch: s.fetch, headers: s.headers })(
        modelId,
      );
    }
    case "openai":
    case "openai-chat": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      const openai = createOpenAI({
        apiKey: s.apiKey,
        baseURL: s.baseURL,
        fetch: s.fetch,
        headers: s.headers,
      });
      return provider === "openai" ? openai.responses(modelId) : openai.chat(modelId);
    }
    case "google": {
      const { createGoogleGenerativeAI } = await import("@ai-sdk/google");
      return createGoogleGenerativeAI({
        apiKey: s.apiKey,
        baseURL: s.baseURL,
        fetch: s.fetch,
        headers: s.headers,
      })(modelId);
    }
    case "ollama":
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      return createOpenAICompatible({
        name: provider,
        apiKey: s.apiKey,
        baseURL: s.baseURL as string,
        fetch: s.fetch,
        headers: s.headers,
        includeUsage: true,
      }).chatModel(modelId);
    }
  }
}
