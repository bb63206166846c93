export { DEFAULT_RENDER_LIMITS, type RenderLimitName, type RenderLimits } from "./budget.js";
export {
  linkStandalone,
  normalizeTemplateSource,
  type RenderOptions,
  type RenderResult,
  TemplateEnvironment,
} from "./environment.js";
export {
  TemplateEngineVersionError,
  TemplateLimitError,
  type TemplateLocation,
  TemplateRenderError,
  TemplateSyntaxError,
  TemplateUnprintableValueError,
  type UnprintableType,
} from "./errors.js";
export type { CompiledTemplate, LinkedTemplate, TemplateReference } from "./scope.js";
export type { TemplateData } from "./template-data.js";
