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
      leaseBoundMs: 1_000,
      async dispose() {
        await Promise.all(opened.map((dispatcher) => dispatcher.close()));
      },
    };
  },
  { describe, it },
);
