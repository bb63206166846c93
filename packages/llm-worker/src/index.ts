export * from "./adapters/index.js";
export * from "./errors.js";
export * from "./items/index.js";
export * from "./prompt/index.js";
export * from "./retry/index.js";
export * from "./tools/index.js";
export * from "./worker/index.js";
