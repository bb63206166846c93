import type { Claim, Dispatcher } from "../dispatcher.js";

/**
 * What the suite needs of an adapter under test, made fresh for every test so tests never see
 * each other's runs (a new database schema, a new in-process queue).
 */
export interface DispatcherHarness {
  /** A dispatcher on an empty engine. */
  dispatcher: Dispatcher;
  /** Another dispatcher on the same engine, as a second process or machine would hold it. */
  connect(): Promise<Dispatcher>;
  /**
   * Makes `dispatcher` die as a killed process would: it renews no lease and settles nothing
   * any more, and its leases are lost within `leaseBoundMs`.
   */
  crash(dispatcher: Dispatcher): Promise<void>;
  /**
   * Makes the engine take `claim`'s lease away as it does when the holder stalls past its lease (a
   * GC pause, a swapped-out VM, SIGSTOP) while its process lives on: the run becomes claimable
   * again, and the holder learns of it through `leaseLost` within `leaseBoundMs`.
   */
  loseLease(dispatcher: Dispatcher, claim: Claim): Promise<void>;
  /** How long after a crash its leased runs may take to become claimable again. */
  leaseBoundMs: number;
  /** Closes every dispatcher it made and removes the data. */
  dispose(): Promise<void>;
}

/**
 * The two test-runner functions the suite uses — vitest's, jest's or mocha's `describe`/`it` as
 * they are. Assertions use `node:assert`, so the package does not depend on a test runner.
 */
export interface ConformanceTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
}

/** What each group of cases receives: `it` with a fresh harness per test. */
export interface CaseContext {
  it(name: string, body: (harness: DispatcherHarness) => Promise<void>): void;
}
