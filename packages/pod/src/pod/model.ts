import { adapterFromModel, createModelAdapter, type ModelAdapter } from "@podkit/llm-worker";
import type { ResolvedManifest } from "@podkit/manifest";

/** A LanguageModelV3 (the AI SDK provider interface). */
export type LanguageModel = Parameters<typeof adapterFromModel>[0];

/** A LanguageModelV3 to use as it is, or a base URL replacing the manifest's endpoint. */
export type ModelOverride = LanguageModel | string;

/**
 * The pod's model adapter. The API key is not needed to construct a pod (`podkit prompt render`
 * works without one): the adapter's wire properties are taken from a keyless probe, and the real
 * adapter — which resolves the key and throws the `ConfigurationError` naming the variable — is
 * built when the worker loads the model for its first request.
 */
export function podModelAdapter(
  model: ResolvedManifest["model"],
  override: ModelOverride | undefined,
  env: Readonly<Record<string, string | undefined>>,
): ModelAdapter {
  if (override !== undefined && typeof override !== "string") return adapterFromModel(override);
  const baseUrl = override ?? model.base_url;
  const options = {
    env,
    ...(baseUrl === undefined ? {} : { baseUrl }),
    ...(model.api_key_env === undefined ? {} : { apiKeyEnv: model.api_key_env }),
  };
  const probe = createModelAdapter(model.ref, { ...options, apiKey: "unused-probe-key" });
  let real: ModelAdapter | undefined;
  return {
    provider: probe.provider,
    modelId: probe.modelId,
    providerOptionsKey: probe.providerOptionsKey,
    midHistorySystemRole: probe.midHistorySystemRole,
    cacheStyle: probe.cacheStyle,
    reasoningStyle: probe.reasoningStyle,
    load: () => {
      try {
        real ??= createModelAdapter(model.ref, options);
      } catch (error) {
        return Promise.reject(error);
      }
      return real.load();
    },
  };
}
