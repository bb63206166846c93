export {
  linkStandalone,
  normalizeTemplateSource,
  type RenderOptions,
  type RenderResult,
  TemplateEnvironment,
} from "./environment.js";
export { type TemplateLocation, TemplateRenderError, TemplateSyntaxError } from "./errors.js";
export type { CompiledTemplate, LinkedTemplate, TemplateReference } from "./scope.js";
export type { TemplateData } from "./template-data.js";
