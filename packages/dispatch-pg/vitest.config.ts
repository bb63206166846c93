import { packageTestConfig } from "../../vitest.shared.ts";

const config = packageTestConfig(import.meta.dirname);

// The tests need a real PostgreSQL server: PODKIT_TEST_DATABASE_URL (.ci/run starts one), or a
// throwaway cluster the global setup starts and stops (the store-postgres tests' setup, shared).
export default {
  ...config,
  test: { ...config.test, globalSetup: ["../store-postgres/test/helpers/database-setup.ts"] },
};
