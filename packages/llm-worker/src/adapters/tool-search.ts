import type { LanguageModelV3FunctionTool, LanguageModelV3ProviderTool } from "@ai-sdk/provider";
import type { ModelAdapter } from "./model-adapter.js";

/**
 * A provider's own tool search, which podkit uses for deferred tools (docs/tools-deferred.md):
 * Anthropic's tool search tool (BM25) and OpenAI Responses' hosted `tool_search`, both reached
 * through the AI SDK's provider options (`deferLoading` on a function tool) and provider tools.
 */
export type NativeToolSearch = "anthropic" | "openai-responses";

/**
 * The native tool search of an adapter's wire, or undefined where it has none (OpenAI Chat,
 * openai-compatible servers, Gemini, a custom model): those wires reach deferred tools through
 * the pod's `find_tools`/`call_tool` pair. The wire is read from `reasoningStyle`, the field that
 * already names it per adapter (`adapterFromModel` callers set it to opt in).
 */
export function nativeToolSearchOf(
  adapter: Pick<ModelAdapter, "reasoningStyle">,
): NativeToolSearch | undefined {
  switch (adapter.reasoningStyle) {
    case "anthropic":
      return "anthropic";
    case "openai-responses":
      return "openai-responses";
    default:
      return undefined;
  }
}

/** Anthropic's BM25 tool search (natural-language queries), as @ai-sdk/anthropic 3.x names it. */
const ANTHROPIC_TOOL_SEARCH: LanguageModelV3ProviderTool = {
  type: "provider",
  id: "anthropic.tool_search_bm25_20251119",
  name: "tool_search_tool_bm25",
  args: {},
};

/** OpenAI Responses' hosted tool search, as @ai-sdk/openai 3.x names it (`execution: "server"`). */
const OPENAI_TOOL_SEARCH: LanguageModelV3ProviderTool = {
  type: "provider",
  id: "openai.tool_search",
  name: "tool_search",
  args: {},
};

/**
 * The tools array of a request. With native tool search every definition is sent, the deferred
 * ones with `deferLoading: true` in their provider options, followed by the provider's tool
 * search tool; without it the deferred definitions are left out (the `find_tools`/`call_tool`
 * pair, which the pod puts among `definitions`, reaches them). The result depends only on its
 * inputs, which are fixed at the tool server's flush, so every request of a session sends the
 * same tools array byte for byte.
 */
export function requestTools(
  definitions: readonly LanguageModelV3FunctionTool[],
  deferred: ReadonlySet<string>,
  adapter: Pick<ModelAdapter, "reasoningStyle" | "providerOptionsKey">,
): Array<LanguageModelV3FunctionTool | LanguageModelV3ProviderTool> {
  if (deferred.size === 0) return [...definitions];
  const search = nativeToolSearchOf(adapter);
  if (search === undefined) return definitions.filter((definition) => !deferred.has(definition.name));
  const marked = definitions.map((definition) =>
    deferred.has(definition.name)
      ? {
          ...definition,
          providerOptions: { [adapter.providerOptionsKey]: { deferLoading: true } },
        }
      : definition,
  );
  return [...marked, search === "anthropic" ? ANTHROPIC_TOOL_SEARCH : OPENAI_TOOL_SEARCH];
}
