export { type PodTelemetryOptions, TELEMETRY_SCOPE } from "./pod-telemetry.js";
