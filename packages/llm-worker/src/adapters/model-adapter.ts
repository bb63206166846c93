import type { LanguageModelV3 } from "@ai-sdk/provider";

/** The providers a model ref may name. */
export const PROVIDERS = [
  "anthropic",
  "openai",
  "openai-chat",
  "google",
  "ollama",
  "openai-compatible",
] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** How the worker must shape requests for one provider. */
export interface ModelAdapter {
  /** The provider part of the ref, or a custom name for `adapterFromModel`. */
  readonly provider: string;
  readonly modelId: string;
  /** Key under which this provider reads `providerOptions` (and writes provider metadata). */
  readonly providerOptionsKey: string;
  /**
   * Whether the wire has a system role in the middle of a conversation. When false, history
   * system items are sent as user-role text (Anthropic, Gemini, OpenAI-compatible servers).
   */
  readonly midHistorySystemRole: boolean;
  /** `anthropic`: cache-control breakpoints; `openai`: a prompt cache key; `none`. */
  readonly cacheStyle: "anthropic" | "openai" | "none";
  /** How `reasoning` in the request config is expressed on this wire. */
  readonly reasoningStyle:
    | "anthropic"
    | "openai-responses"
    | "openai-chat"
    | "google"
    | "openai-compatible"
    | "none";
  /** The LanguageModelV3, built on first use (the provider package is imported then). */
  load(): Promise<LanguageModelV3>;
}

/**
 * Wraps an existing LanguageModelV3 (a custom provider) as an adapter. Nothing provider
 * specific is added to requests unless `overrides` says so.
 */
export function adapterFromModel(
  model: LanguageModelV3,
  overrides: Partial<Omit<ModelAdapter, "load">> = {},
): ModelAdapter {
  return {
    provider: overrides.provider ?? model.provider,
    modelId: overrides.modelId ?? model.modelId,
    providerOptionsKey: overrides.providerOptionsKey ?? model.provider.split(".")[0] ?? model.provider,
    midHistorySystemRole: overrides.midHistorySystemRole ?? false,
    cacheStyle: overrides.cacheStyle ?? "none",
    reasoningStyle: overrides.reasoningStyle ?? "none",
    load: () => Promise.resolve(model),
  };
}
