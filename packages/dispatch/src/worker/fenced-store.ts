import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import { LeaseLostError } from "../errors.js";

const WRITES: ReadonlySet<PropertyKey> = new Set(["createSegment", "append", "truncate"]);

/**
 * The session store as one attempt of a run sees it: every write first checks that the attempt
 * still holds its lease (`lease` aborts when the engine's heartbeat lapsed or the run was
 * cancelled), so a worker that lost its run — stalled past its heartbeat while another worker
 * took over — writes nothing more, and the store's one-writer rule catches what slips between the
 * check and the write. Everything else passes through (a proxy, so methods the `Store` interface
 * gains later, such as an incremental read, pass too); `close` is the owner's, not the attempt's.
 */
export function fencedStore(store: Store<Item>, runId: string, lease: AbortSignal): Store<Item> {
  return new Proxy(store, {
    get(target, property) {
      if (property === "close") return async () => {};
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (!WRITES.has(property)) return value.bind(target);
      return async (...args: unknown[]) => {
        if (lease.aborted) throw new LeaseLostError(runId, lease.reason);
        return value.apply(target, args);
      };
    },
  });
}
