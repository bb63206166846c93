import { ERROR_KINDS, SessionStoreError } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import {
  PostgresQueryError,
  PostgresStoreError,
  PostgresStoreUsageError,
  SchemaTooNewError,
  SchemaUpgradeBlockedError,
} from "../src/errors.js";

// Every error class carries its own `Symbol.for("podkit.store-postgres.error.<kind>")` marker; its
// `isInstance` checks that marker, never the mutable `name` (docs/errors.md). They are also
// session-store errors, so a caller handling `SessionStoreError` handles a store failure too.
const CASES = [
  {
    kind: "schema-too-new",
    errorKind: "unsupported",
    make: () => new SchemaTooNewError({ schema: "public", databaseVersion: 3, supportedVersion: 1 }),
    is: SchemaTooNewError,
  },
  {
    kind: "query-failed",
    errorKind: "transient",
    make: () =>
      new PostgresQueryError({ operation: "appending", where: "postgres:x", cause: new Error("boom") }),
    is: PostgresQueryError,
  },
  {
    kind: "schema-upgrade-blocked",
    errorKind: "corrupt",
    make: () =>
      new SchemaUpgradeBlockedError({
        schema: "public",
        version: 3,
        segments: [{ segmentId: "g", counted: 4, held: 3 }],
      }),
    is: SchemaUpgradeBlockedError,
  },
  {
    kind: "usage",
    errorKind: "usage",
    make: () => new PostgresStoreUsageError("bad schema"),
    is: PostgresStoreUsageError,
  },
] as const;

describe("store-postgres errors carry per-class markers", () => {
  it.each(CASES)("$kind: is of kind $errorKind, one of the vocabulary", ({ make, errorKind }) => {
    expect(ERROR_KINDS).toContain(errorKind);
    expect(make().errorKind).toBe(errorKind);
    // The database is what fails here, unless a class says otherwise.
    expect(new PostgresStoreError("x").errorKind).toBe("transient");
  });

  it.each(CASES)(
    "$kind: recognised by its marker even when renamed, and only by it",
    ({ kind, make, is }) => {
      const error = make();
      expect(is.isInstance(error)).toBe(true);
      expect(PostgresStoreError.isInstance(error)).toBe(true);
      expect(SessionStoreError.isInstance(error)).toBe(true);
      error.name = "Renamed";
      expect(is.isInstance(error)).toBe(true);
      const impostor = Object.assign(new PostgresStoreError("x"), { name: is.name });
      expect(is.isInstance(impostor)).toBe(false);
      const foreign = Object.assign(new Error("another copy"), {
        [Symbol.for("podkit.store-postgres.error")]: true,
        [Symbol.for(`podkit.store-postgres.error.${kind}`)]: true,
      });
      expect(is.isInstance(foreign)).toBe(true);
      for (const other of CASES) expect(other.is.isInstance(error)).toBe(other.is === is);
    },
  );
});
