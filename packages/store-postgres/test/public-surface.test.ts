import type { StorePackage } from "@podkit/session-store";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/store-postgres", () => {
  it("exports the store, its entry point for applications, migrations and errors; no SQL", () => {
    expect(Object.keys(api).sort()).toEqual([
      "PostgresQueryError",
      "PostgresStore",
      "PostgresStoreError",
      "PostgresStoreUsageError",
      "SCHEMA_VERSION",
      "SchemaTooNewError",
      "SchemaUpgradeBlockedError",
      "migrate",
      "openStore",
    ]);
    for (const internal of [
      "storeQueries",
      "ensureSchema",
      "quoteSchema",
      "MIGRATIONS",
      "PostgresBlobStore",
      "blobQueries",
    ]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });

  it("is a store package an application can select by name (`openStore`)", () => {
    expectTypeOf(api).toMatchTypeOf<StorePackage>();
    const store = api.openStore({ url: "postgres://podkit@127.0.0.1:9/none" });
    expect(store).toBeInstanceOf(api.PostgresStore);
  });
});
