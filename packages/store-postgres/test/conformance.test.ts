import { describeStoreConformance } from "@podkit/session-store/conformance";
import { describe, it } from "vitest";
import { migrate, PostgresStore } from "../src/index.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

const admin = useAdminPool();

describeStoreConformance(
  "PostgresStore",
  async () => {
    const schema = uniqueSchema();
    const open = () => new PostgresStore({ url: databaseUrl(), schema, maxConnections: 3 });
    const stores = [open()];
    return {
      store: stores[0] as PostgresStore,
      openSecond() {
        const second = open();
        stores.push(second);
        return second;
      },
      async writeRaw(ref, texts) {
        await migrate(admin(), { schema });
        await admin().query(
          `INSERT INTO "${schema}".podkit_segments (segment_id, session_id) VALUES ($1, $2)`,
          [ref.segmentId, ref.sessionId],
        );
        for (const [seq, body] of texts.entries()) {
          await admin().query(
            `INSERT INTO "${schema}".podkit_entries (segment_id, seq, body) VALUES ($1, $2, $3)`,
            [ref.segmentId, seq, body],
          );
        }
      },
      async dispose() {
        await Promise.all(stores.map((store) => store.close()));
        await dropSchema(admin(), schema);
      },
    };
  },
  { describe, it },
);
