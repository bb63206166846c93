import type { SharedV3ProviderOptions } from "@ai-sdk/provider";
import type { RequestConfig } from "../worker/request-config.js";
import type { ModelAdapter } from "./model-adapter.js";

/**
 * Reasoning efforts the worker maps onto every wire: passed through to effort-based wires
 * (OpenAI), turned into thinking budgets for budget-based ones (Anthropic, Gemini). The
 * manifest's `worker.reasoning` accepts exactly these (a test holds the two lists together).
 */
export const REASONING_EFFORTS = ["minimal", "low", "medium", "high"] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** Thinking budgets used when an effort string is given to a budget-based wire. */
const EFFORT_BUDGETS: Readonly<Record<ReasoningEffort, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
};

/** The effort bucket a thinking budget falls into, for effort-based wires. */
function effortForBudget(budget: number): string {
  if (budget <= 2048) return "low";
  if (budget <= 8192) return "medium";
  return "high";
}

function budgetForEffort(effort: string): number {
  return (REASONING_EFFORTS as readonly string[]).includes(effort)
    ? EFFORT_BUDGETS[effort as ReasoningEffort]
    : EFFORT_BUDGETS.medium;
}

/**
 * Provider options for one request: reasoning settings in the wire's terms, OpenAI's
 * `store: false` (so encrypted reasoning comes back and is replayed from history) and the
 * prompt cache key.
 */
export function buildProviderOptions(
  adapter: ModelAdapter,
  config: RequestConfig,
  promptCacheKey: string | undefined,
): SharedV3ProviderOptions {
  const options: Record<string, unknown> = {};
  const reasoning = config.reasoning;
  switch (adapter.reasoningStyle) {
    case "anthropic":
      if (reasoning !== undefined) {
        const budgetTokens = typeof reasoning === "number" ? reasoning : budgetForEffort(reasoning);
        options.thinking = { type: "enabled", budgetTokens };
      }
      break;
    case "openai-responses":
      options.store = false;
      if (reasoning !== undefined) {
        options.reasoningEffort = typeof reasoning === "number" ? effortForBudget(reasoning) : reasoning;
        options.reasoningSummary = "auto";
      }
      break;
    case "openai-chat":
    case "openai-compatible":
      if (reasoning !== undefined) {
        options.reasoningEffort = typeof reasoning === "number" ? effortForBudget(reasoning) : reasoning;
      }
      break;
    case "google":
      if (reasoning !== undefined) {
        options.thinkingConfig =
          typeof reasoning === "number"
            ? { thinkingBudget: reasoning, includeThoughts: true }
            : { thinkingBudget: budgetForEffort(reasoning), includeThoughts: true };
      }
      break;
    case "none":
      break;
  }
  if (adapter.cacheStyle === "openai" && promptCacheKey !== undefined)
    options.promptCacheKey = promptCacheKey;
  return Object.keys(options).length > 0 ? { [adapter.providerOptionsKey]: options as never } : {};
}
