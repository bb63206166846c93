// The public surface of @podkit/serve: start the server, give it pods, recognise its errors.
export type { ErrorKind } from "@podkit/llm-worker";
export { ServeError, ServeTokenRequiredError, ServeUsageError } from "./errors.js";
export type { AppendNotifications, PollIntervals } from "./feed/append-wakers.js";
export type { PodSource } from "./runs/pod-source.js";
export type { SessionRunsOptions } from "./runs/session-runs.js";
export { isLoopbackHost } from "./security/bind-policy.js";
export type { ServeTokenHolder } from "./security/credentials.js";
export { type PodkitServer, type ServeOptions, startServer } from "./server.js";
