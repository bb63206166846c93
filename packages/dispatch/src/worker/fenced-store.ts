import type { Item } from "@podkit/llm-worker";
import type { AppendOutcome, SegmentRef, Store, TruncateOutcome } from "@podkit/session-store";
import { DispatchError } from "../errors.js";
import type { LeaseFence } from "./lease-fence.js";

const WRITES: ReadonlySet<PropertyKey> = new Set(["createSegment", "append", "truncate"]);

/**
 * The session store as one attempt of a run sees it: every write first passes the attempt's
 * `fence` (synchronously, right before the store is called), so a worker whose lease may be gone —
 * it stalled past its heartbeat while another worker took over, or the engine reported the lease
 * lost — writes nothing more, not even a new segment. What slips between the check and the store
 * is caught by the store's one-writer rule, and under a lease a `drift` means exactly that: another
 * worker writes this session now. The fence closes and the write fails with `LeaseLostError` — the
 * attempt stops and never forks (a fork is what an interactive writer does on drift). Everything
 * else passes through (a proxy, so methods the `Store` interface gains later, such as an
 * incremental read, pass too); `close` is the owner's, not the attempt's.
 */
export function fencedStore(store: Store<Item>, fence: LeaseFence): Store<Item> {
  return new Proxy(store, {
    get(target, property) {
      if (property === "close") return async () => {};
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (!WRITES.has(property)) return value.bind(target);
      return async (...args: unknown[]) => {
        fence.check();
        const outcome: unknown = await value.apply(target, args);
        if (property !== "createSegment" && isDrift(outcome)) {
          const ref = args[0] as SegmentRef;
          fence.close(
            new DispatchError(
              `another writer changed segment ${ref.sessionId}/${ref.segmentId} (it holds ${outcome.count} entries)`,
            ),
          );
          fence.check();
        }
        return outcome;
      };
    },
  });
}

function isDrift(outcome: unknown): outcome is Extract<AppendOutcome | TruncateOutcome, { status: "drift" }> {
  return (outcome as { status?: unknown } | undefined)?.status === "drift";
}
