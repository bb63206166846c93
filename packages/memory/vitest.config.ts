import { packageTestConfig } from "../../vitest.shared.ts";

// The package has no code and no tests yet; its test task must still leave a report.
export default packageTestConfig(import.meta.dirname, { passWithNoTests: true });
