import { packageTestConfig } from "../../vitest.shared.ts";

// Nearly every test here runs the built CLI in child processes, several in a row; on a busy
// two-core machine each start takes seconds, and 30 s timed out tests that take 8 s idle.
export default packageTestConfig(import.meta.dirname, { testTimeout: 120_000 });
