export {
  PROMPT_LAYERS,
  PromptCatalogError,
  type PromptLayer,
  PromptRenderError,
  UnknownPromptKeyError,
} from "./errors.js";
export {
  type ContextSectionText,
  isPodPrompt,
  type NoPromptContext,
  POD_PROMPTS,
  type PodPrompt,
  type PodPromptContext,
  type PodPromptContexts,
  type SkillSummary,
} from "./pod-prompt.js";
export { PromptCatalog, type PromptCatalogOptions, type PromptExplanation } from "./prompt-catalog.js";
