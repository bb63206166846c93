import type { LanguageModelV3CallOptions, LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import type { ModelAdapter } from "../adapters/model-adapter.js";
import { buildProviderOptions } from "../adapters/provider-options.js";
import { requestTools } from "../adapters/tool-search.js";
import type { Item } from "../items/item.js";
import type { MediaBytes } from "../media/request-media.js";
import { planCacheBreakpoints } from "../prompt/cache-breakpoints.js";
import { toV3Prompt } from "../prompt/to-v3-prompt.js";
import type { RequestConfig } from "./request-config.js";

export interface CallInputs {
  adapter: ModelAdapter;
  systemPrompt: string | undefined;
  items: readonly Item[];
  tools: readonly LanguageModelV3FunctionTool[];
  /** The deferred tools among `tools` (docs/tools-deferred.md); none when absent. */
  deferredTools?: ReadonlySet<string>;
  config: RequestConfig;
  /** Undefined when caching hints are off. */
  promptCacheKey: string | undefined;
  cacheEnabled: boolean;
  /** Item count of the previous request, for the "previous request" breakpoint. */
  previousRequestLength: number | undefined;
  /** Index of the last item of a prefix earlier requests sent unchanged (the interceptor's `stablePrefixEnd`). */
  stablePrefixEnd?: number | undefined;
  /** Anthropic code-execution container to keep using (from an earlier response). */
  containerId?: string | undefined;
  /** The bytes of the media `items` name (docs/media.md); without it every part is a note. */
  media?: MediaBytes;
}

/** Builds the `doStream()` options of one request: prompt with cache hints, sorted tools, sampling, provider options. */
export function buildCallOptions(inputs: CallInputs): LanguageModelV3CallOptions {
  const { adapter, config, items } = inputs;
  const breakpoints =
    inputs.cacheEnabled && adapter.cacheStyle === "anthropic"
      ? planCacheBreakpoints(
          items,
          inputs.systemPrompt !== undefined && inputs.systemPrompt !== "",
          inputs.previousRequestLength === undefined ? undefined : inputs.previousRequestLength - 1,
          inputs.stablePrefixEnd,
        )
      : undefined;
  const providerOptions = buildProviderOptions(
    adapter,
    config,
    inputs.cacheEnabled ? inputs.promptCacheKey : undefined,
  );
  if (inputs.containerId !== undefined && adapter.providerOptionsKey === "anthropic") {
    providerOptions.anthropic = { ...providerOptions.anthropic, container: { id: inputs.containerId } };
  }
  const options: LanguageModelV3CallOptions = {
    prompt: toV3Prompt(inputs.systemPrompt, items, adapter, breakpoints, inputs.media),
    providerOptions,
  };
  if (inputs.tools.length > 0)
    options.tools = requestTools(inputs.tools, inputs.deferredTools ?? new Set(), adapter);
  if (config.max_tokens !== undefined) options.maxOutputTokens = config.max_tokens;
  if (config.temperature !== undefined) options.temperature = config.temperature;
  if (config.top_p !== undefined) options.topP = config.top_p;
  if (config.top_k !== undefined) options.topK = config.top_k;
  if (config.stop_sequences !== undefined) options.stopSequences = config.stop_sequences;
  if (config.response_format !== undefined) {
    const { schema, name } = config.response_format;
    options.responseFormat = {
      type: "json",
      schema: schema as NonNullable<
        Extract<LanguageModelV3CallOptions["responseFormat"], { type: "json" }>["schema"]
      >,
      ...(name === undefined ? {} : { name }),
    };
  }
  return options;
}
