import type { MinimalItem } from "../entry/entry-schema.js";
import type { SegmentRef, Store } from "../store/store.js";

/**
 * What the suite needs of a store under test, made fresh for every test so tests never see each
 * other's sessions (a new temp directory, a new database schema, …).
 */
export interface ConformanceHarness {
  /** An empty store. */
  store: Store<MinimalItem>;
  /**
   * Another store on the same data, as a second process or machine would open it: its own
   * locks, connections and caches. Two writers race through `store` and `openSecond()`.
   */
  openSecond(): Store<MinimalItem>;
  /**
   * Writes a segment whose entries are exactly `texts` (each one entry's JSON, as the entry
   * codec would produce it, without any framing of the store's own), bypassing validation: how
   * the suite plants corrupt entries and segments written by a newer format.
   */
  writeRaw(ref: SegmentRef, texts: readonly string[]): Promise<void>;
  /** Closes every store it opened and removes the data. */
  dispose(): Promise<void>;
}

/**
 * The two test-runner functions the suite uses — vitest's, jest's or mocha's `describe`/`it`
 * as they are (node:test needs a one-line adapter for the timeout argument). Assertions use
 * `node:assert`, so the package does not depend on any test runner.
 */
export interface ConformanceTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
}

/** What each group of cases receives: `it` with a fresh harness per test. */
export interface CaseContext {
  it(name: string, body: (harness: ConformanceHarness) => Promise<void>): void;
}
