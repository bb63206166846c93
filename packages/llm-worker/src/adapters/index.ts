export {
  createModelAdapter,
  DEFAULT_API_KEY_ENV,
  type ModelAdapterOptions,
  OLLAMA_DEFAULT_BASE_URL,
  parseModelRef,
} from "./create-model-adapter.js";
export { adapterFromModel, type ModelAdapter, PROVIDERS, type ProviderName } from "./model-adapter.js";
export { REASONING_EFFORTS, type ReasoningEffort } from "./provider-options.js";
export type { NativeToolSearch } from "./tool-search.js";
