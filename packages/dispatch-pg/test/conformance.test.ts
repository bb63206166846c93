import { describeDispatcherConformance } from "@podkit/dispatch/conformance";
import { describe, it } from "vitest";
import {
  databaseUrl,
  dropSchema,
  uniqueSchema,
  useAdminPool,
} from "../../store-postgres/test/helpers/database.js";
import { PgDispatcher } from "../src/index.js";
import { loseLease } from "./helpers/lose-lease.js";

const admin = useAdminPool();

describeDispatcherConformance(
  "PgDispatcher",
  async () => {
    const schema = uniqueSchema();
    const open = () =>
      new PgDispatcher({ url: databaseUrl(), schema, maxConnections: 4, superviseSeconds: 1 });
    const opened = [open()];
    return {
      dispatcher: opened[0] as PgDispatcher,
      async connect() {
        const dispatcher = open();
        opened.push(dispatcher);
        return dispatcher;
      },
      async crash(dispatcher) {
        // A killed process: its connections drop, nothing is settled, its heartbeats stop.
        await (dispatcher as PgDispatcher).close();
      },
      async loseLease(_dispatcher, claim) {
        if (claim.work.kind !== "run") throw new Error("loseLease is for run claims");
        await loseLease(databaseUrl(), schema, claim.work.run.pod, claim.work.run.runId);
      },
      // pg-boss's minimum heartbeat (10 s), the supervisor's pass (1 s) and a poll (1 s), with room.
      leaseBoundMs: 16_000,
      async dispose() {
        await Promise.all(opened.map((dispatcher) => dispatcher.close()));
        await dropSchema(admin(), schema);
      },
    };
  },
  { describe, it },
);
