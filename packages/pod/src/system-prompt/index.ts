export { readAgentsMd } from "./agents-md.js";
export { InvalidSystemPromptTemplateError, SystemPromptRenderError } from "./errors.js";
export {
  buildSystemPromptContext,
  type ScopeView,
  type SystemPromptContext,
  type SystemPromptContextInput,
} from "./system-prompt-context.js";
export {
  joinSystemPromptSections,
  SYSTEM_PROMPT_TEMPLATE_NAME,
  type SystemPromptBody,
  SystemPromptTemplate,
} from "./system-prompt-template.js";
