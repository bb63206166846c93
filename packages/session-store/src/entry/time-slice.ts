import { setImmediate as nextTurn } from "node:timers/promises";

/** How long a slice of work may hold the event loop before it yields. */
const SLICE_MS = 8;

/**
 * A pause for long synchronous work (serializing or parsing a history of tens of thousands of
 * items): `await pause()` between units of work gives the event loop a turn once `SLICE_MS` have
 * passed since the last one, so streaming, timers and other sessions keep running while a fork
 * or a restore of a long session is written or read.
 */
export type Pause = () => Promise<void> | undefined;

/** A fresh pause whose first slice starts now; `signal` is checked at every yield. */
export function timeSlicer(signal?: AbortSignal): Pause {
  let since = performance.now();
  return () => {
    if (performance.now() - since < SLICE_MS) return undefined;
    return nextTurn().then(() => {
      signal?.throwIfAborted();
      since = performance.now();
    });
  };
}
