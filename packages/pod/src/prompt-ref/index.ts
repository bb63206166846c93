export {
  InvalidPromptRefError,
  PromptIoError,
  PromptNotFoundError,
  PromptRefError,
  PromptRootEscapeError,
  UnconfiguredPromptPrefixError,
  UnknownPromptPrefixError,
} from "./errors.js";
export {
  PromptLoader,
  type PromptLocations,
  type PromptRootOwners,
  type PromptRoots,
  promptRootOwnersFor,
  promptRootsFor,
} from "./prompt-loader.js";
export {
  PROMPT_PREFIXES,
  type PromptOrigin,
  type PromptPrefix,
  type PromptRef,
  parsePromptRef,
} from "./prompt-ref.js";
