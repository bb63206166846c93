import { ScriptError } from "../errors.js";
import type { Fault, ScriptedResponse, Wire } from "../types.js";
import { renderScript } from "../wire/render.js";
import { createIdSource } from "../wire/render-context.js";

const partTypes = new Set([
  "text",
  "reasoning",
  "redacted_reasoning",
  "tool_call",
  "server_tool_call",
  "server_tool_result",
  "compaction",
  "error",
  "raw",
]);

/**
 * Checks a scripted response when it is queued, so a mistake in a test's script fails at `enqueue` with the
 * response's position and the offending field instead of as an opaque stream error later.
 */
export function validateScriptedResponse(wire: Wire, response: ScriptedResponse, where: string): void {
  if (typeof response !== "object" || response === null) {
    throw new ScriptError(
      `${where}: a scripted response must be an object with "parts", "chunks" or a status "fault"`,
    );
  }
  if ("fault" in response && response.fault !== undefined) validateFault(response.fault, `${where}.fault`);
  if ("parts" in response) {
    if (!Array.isArray(response.parts)) throw new ScriptError(`${where}.parts must be an array of parts`);
    response.parts.forEach((part, i) => {
      if (typeof part !== "object" || part === null || !partTypes.has(part.type)) {
        throw new ScriptError(
          `${where}.parts[${i}].type must be one of ${[...partTypes].join(", ")}, got ${JSON.stringify((part as { type?: unknown })?.type)}`,
        );
      }
    });
    // Rendering once with throwaway ids surfaces bad chunk sizes and unstreamable arguments now.
    renderScript(wire, response, { nextId: createIdSource(), now: () => 0, model: "validation" });
    return;
  }
  if ("chunks" in response) {
    if (!Array.isArray(response.chunks) || response.chunks.some((chunk) => typeof chunk !== "string")) {
      throw new ScriptError(`${where}.chunks must be an array of strings (one SSE payload each)`);
    }
    return;
  }
  if (!("fault" in response) || response.fault?.kind !== "status") {
    throw new ScriptError(
      `${where}: a response without "parts" or "chunks" must have a fault of kind "status"`,
    );
  }
}

function validateFault(fault: Fault, where: string): void {
  const count = (value: unknown, name: string) => {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
      throw new ScriptError(`${where}.${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
    }
  };
  switch (fault.kind) {
    case "status":
      if (!Number.isInteger(fault.status) || fault.status < 400 || fault.status > 599) {
        throw new ScriptError(
          `${where}.status must be an HTTP error status (400-599), got ${String(fault.status)}`,
        );
      }
      return;
    case "reset":
    case "malformed":
      count(fault.afterEvents, "afterEvents");
      return;
    case "stall":
      count(fault.afterEvents, "afterEvents");
      count(fault.ms, "ms");
      return;
    default:
      throw new ScriptError(
        `${where}.kind must be "status", "reset", "stall" or "malformed", got ${JSON.stringify((fault as { kind?: unknown }).kind)}`,
      );
  }
}
