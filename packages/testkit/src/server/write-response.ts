import type { ServerResponse } from "node:http";
import type { Fault, SseEvent, Wire } from "../types.js";
import { errorBody } from "../wire/error-body.js";
import { formatSseEvent, malformedFrame } from "../wire/sse.js";

/** Writes an HTTP error the way the provider does: status, provider-shaped JSON body, optional Retry-After. */
export function writeStatus(
  res: ServerResponse,
  wire: Wire,
  fault: { status: number; retryAfter?: string | number; body?: string },
  message = `provider double: scripted HTTP ${fault.status}`,
): void {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
  res.writeHead(fault.status, headers);
  res.end(fault.body ?? errorBody(wire, fault.status, message));
}

/**
 * Streams events as `text/event-stream`, injecting the fault (if any) after `afterEvents` events. `signal`
 * aborts when the double closes or the client goes away, so a stall never outlives either.
 */
export async function writeEventStream(
  res: ServerResponse,
  wire: Wire,
  events: readonly SseEvent[],
  fault: Exclude<Fault, { kind: "status" }> | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (fault?.kind === "stall" && fault.afterEvents === 0) {
    await sleep(fault.ms, signal);
    if (signal.aborted) return;
  }
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
  const faultAt = fault === undefined ? -1 : Math.min(fault.afterEvents, events.length);
  for (let index = 0; index <= events.length; index++) {
    if (signal.aborted) return;
    if (index === faultAt && fault !== undefined) {
      if (fault.kind === "reset") {
        // A TCP RST, not a clean FIN: the client sees the connection torn down mid-body.
        res.socket?.resetAndDestroy();
        return;
      }
      if (fault.kind === "malformed") {
        await write(res, formatSseEvent(malformedFrame(wire)), signal, true);
        res.end();
        return;
      }
      if (fault.kind === "stall" && fault.afterEvents > 0) {
        await sleep(fault.ms, signal);
        if (signal.aborted) return;
      }
    }
    const event = events[index];
    // Only the event just before a fault must reach the socket first; the rest stream without a round trip.
    if (event !== undefined) await write(res, formatSseEvent(event), signal, index + 1 === faultAt);
  }
  res.end();
}

/**
 * Writes one chunk. With `flushed`, resolves once the chunk is handed to the socket, so a following fault
 * cannot overtake it; otherwise only waits when the socket asks for backpressure.
 */
function write(res: ServerResponse, text: string, signal: AbortSignal, flushed: boolean): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed || signal.aborted) return resolve();
    // A write to a socket that dies meanwhile may never call back or drain; the abort covers that case.
    const done = () => {
      signal.removeEventListener("abort", done);
      res.off("drain", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    if (flushed) {
      res.write(text, done);
    } else if (res.write(text)) {
      done();
    } else {
      res.once("drain", done);
    }
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener("abort", done, { once: true });
  });
}
