/** Model providers a `model.ref` may name, in the order the docs list them. */
export const PROVIDERS = [
  "anthropic",
  "openai",
  "openai-chat",
  "google",
  "ollama",
  "openai-compatible",
] as const;

/** A provider name from `model.ref`. */
export type Provider = (typeof PROVIDERS)[number];

/** `model.ref` split into its provider and the provider's model id. */
export interface ModelRef {
  provider: Provider;
  modelId: string;
}

/**
 * Splits `"<provider>/<model id>"` at the first slash (model ids may contain slashes, e.g.
 * `openai-compatible/meta-llama/Llama-3.3-70B`). Never throws: like zod's `safeParse` it returns
 * the problem text instead, so the schema can report it against the key and line. (llm-worker's
 * `parseModelRef` accepts and refuses the same refs, and throws a `ConfigurationError`.)
 */
export function safeParseModelRef(ref: string): ModelRef | { problem: string } {
  const slash = ref.indexOf("/");
  const provider = slash < 0 ? ref : ref.slice(0, slash);
  const modelId = slash < 0 ? "" : ref.slice(slash + 1);
  if (!isProvider(provider)) {
    const known = PROVIDERS.join(", ");
    return slash < 0
      ? { problem: `expected "<provider>/<model id>" (providers: ${known}), got "${ref}"` }
      : { problem: `unknown provider "${provider}" in "${ref}"; expected one of ${known}` };
  }
  if (modelId.trim() === "") return { problem: `missing the model id after "${provider}/" in "${ref}"` };
  return { provider, modelId };
}

function isProvider(name: string): name is Provider {
  return (PROVIDERS as readonly string[]).includes(name);
}

/** The environment variable each provider's key is read from when `model.api_key_env` is unset. */
const DEFAULT_API_KEY_ENV: Partial<Record<Provider, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  "openai-chat": "OPENAI_API_KEY",
  google: "GOOGLE_GENERATIVE_AI_API_KEY",
};

/** Default `model.api_key_env` for a provider; local servers (ollama, openai-compatible) have none. */
export function defaultApiKeyEnv(provider: Provider): string | undefined {
  return DEFAULT_API_KEY_ENV[provider];
}

/** Context windows of well-known model families, matched by model-id prefix (longest first). */
const CONTEXT_WINDOWS: ReadonlyArray<readonly [Provider, string, number]> = [
  ["anthropic", "claude-", 200_000],
  ["openai", "gpt-5", 400_000],
  ["openai", "gpt-4.1", 1_047_576],
  ["openai", "gpt-4o", 128_000],
  ["openai", "o3", 200_000],
  ["openai", "o4-mini", 200_000],
  ["google", "gemini-2.5-", 1_048_576],
  ["google", "gemini-2.0-", 1_048_576],
];

/** The window used when neither the manifest nor the builtin table knows better. */
export const FALLBACK_CONTEXT_WINDOW = 200_000;

/**
 * Default `model.context_window` from the builtin model table, else 200000. `openai-chat`
 * shares OpenAI's table (same models, different wire protocol).
 */
export function defaultContextWindow(ref: ModelRef): number {
  const provider = ref.provider === "openai-chat" ? "openai" : ref.provider;
  let best: { prefix: string; window: number } | undefined;
  for (const [p, prefix, window] of CONTEXT_WINDOWS) {
    if (p !== provider || !ref.modelId.startsWith(prefix)) continue;
    if (!best || prefix.length > best.prefix.length) best = { prefix, window };
  }
  return best?.window ?? FALLBACK_CONTEXT_WINDOW;
}
