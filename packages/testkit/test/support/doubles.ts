import { afterEach } from "vitest";
import { type ProviderDouble, type ProviderDoubleOptions, startProviderDouble } from "../../src/index.js";

/**
 * Starts doubles that are closed after each test, so a failing assertion never leaks a listening server.
 * Call once at the top level of a test file.
 */
export function useDoubles(): (options: ProviderDoubleOptions) => Promise<ProviderDouble> {
  const open: ProviderDouble[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((double) => double.close()));
  });
  return async (options) => {
    const double = await startProviderDouble(options);
    open.push(double);
    return double;
  };
}
