import { describe, it } from "vitest";
import { describeDispatcherConformance } from "../src/conformance/index.js";
import { type InProcessDispatcher, InProcessQueue } from "../src/index.js";

describeDispatcherConformance(
  "InProcessDispatcher",
  async () => {
    const queue = new InProcessQueue({ leaseMs: 300 });
    const opened = [queue.connect()];
    return {
      dispatcher: opened[0] as InProcessDispatcher,
      async connect() {
        const dispatcher = queue.connect();
        opened.push(dispatcher);
        return dispatcher;
      },
      async crash(dispatcher) {
        (dispatcher as InProcessDispatcher).crash();
      },
      async loseLease(dispatcher, claim) {
        // Its process pauses (renewing nothing) until the engine has taken the lease away.
        const stalled = dispatcher as InProcessDispatcher;
        stalled.stall(60_000);
        await new Promise<void>((resolve) => {
          if (claim.leaseLost.aborted) resolve();
          else claim.leaseLost.addEventListener("abort", () => resolve(), { once: true });
        });
        stalled.stall(0);
      },
      leaseBoundMs: 1_000,
      async dispose() {
        await Promise.all(opened.map((dispatcher) => dispatcher.close()));
      },
    };
  },
  { describe, it },
);
