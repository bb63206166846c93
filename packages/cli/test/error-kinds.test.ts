import * as dispatch from "@podkit/dispatch";
import * as dispatchPg from "@podkit/dispatch-pg";
import * as worker from "@podkit/llm-worker";
import * as manifest from "@podkit/manifest";
import * as memory from "@podkit/memory";
import * as pod from "@podkit/pod";
import * as serve from "@podkit/serve";
import * as store from "@podkit/session-store";
import * as postgres from "@podkit/store-postgres";
import * as testkit from "@podkit/testkit";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as scheme from "../../../test-support/error-scheme.js";
import * as cli from "../src/index.js";

// One vocabulary of error kinds (docs/errors.md, "Kinds"). llm-worker defines it; manifest,
// session-store and testkit depend on no other podkit package, so each declares a copy, and so
// does the shared marker test. These checks (type-level under `pnpm typecheck`, value-level under
// vitest) fail when a copy drifts: a kind added to one side only would be read by no table.
describe("every podkit package speaks one vocabulary of error kinds", () => {
  it("the copies name the same kinds in the same order", () => {
    for (const copy of [manifest.ERROR_KINDS, store.ERROR_KINDS, testkit.ERROR_KINDS, scheme.ERROR_KINDS]) {
      expect([...copy]).toEqual([...worker.ERROR_KINDS]);
    }
  });

  it("ErrorKind is one type in every package that exports it", () => {
    expectTypeOf<manifest.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<store.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<testkit.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<scheme.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<postgres.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<pod.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<memory.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<dispatch.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<dispatchPg.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<serve.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
    expectTypeOf<cli.ErrorKind>().toEqualTypeOf<worker.ErrorKind>();
  });

  it("every package's base error carries a kind errorKindOf reads back", () => {
    const bases = [
      new manifest.PodkitManifestError("x"),
      new store.SessionStoreError("x"),
      new postgres.PostgresStoreError("x"),
      new worker.LlmWorkerError("x"),
      new testkit.TestkitError("x"),
      new pod.PodkitPodError("x"),
      new memory.MemoryError("x"),
      new dispatch.DispatchError("x"),
      new dispatchPg.DispatchEngineError("x"),
      new serve.ServeError("x"),
      new cli.PodkitCliError("x"),
    ];
    for (const error of bases) {
      expect(worker.ERROR_KINDS, error.name).toContain(error.errorKind);
      expect(worker.errorKindOf(error), error.name).toBe(error.errorKind);
    }
  });
});
