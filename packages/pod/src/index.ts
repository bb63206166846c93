export { builtinPromptsDir } from "./builtin-resources.js";
export * from "./catalog/index.js";
export { PodkitPodError } from "./errors.js";
export * from "./prompt-ref/index.js";
export * from "./system-prompt/index.js";
export * from "./template/index.js";
export { type PodWarning, processWarningSink, type WarningSink } from "./warnings.js";
