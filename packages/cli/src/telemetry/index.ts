export { type CliTelemetry, startTelemetry } from "./start-telemetry.js";
