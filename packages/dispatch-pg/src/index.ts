export type { ErrorKind } from "@podkit/dispatch";
export { DispatchEngineError } from "./errors.js";
export { queueOf } from "./job-data.js";
export { PgDispatcher, type PgDispatcherOptions } from "./pg-dispatcher.js";
