// The public surface: what a user of the package calls. Prompt conversion, stream collection,
// retry timing and output capping are internals (tests import them from their files).
export * from "./adapters/index.js";
export { ERROR_KINDS, type ErrorKind, errorKindOf } from "./error-kinds.js";
export * from "./errors.js";
export * from "./items/index.js";
export * from "./media/index.js";
export { type Clock, DEFAULT_RETRY_POLICY, type RetryPolicy, type Sleep } from "./retry/retry-policy.js";
export * from "./tools/index.js";
export * from "./worker/index.js";
