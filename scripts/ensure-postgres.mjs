// Makes sure the PostgreSQL server binaries the store-postgres tests need are on this machine, so
// that `npm test` is the whole set-up on a fresh Debian/Ubuntu machine: when they are missing, no
// PODKIT_TEST_DATABASE_URL is given, and we may use apt-get (root, or passwordless sudo), install
// the distribution's `postgresql` package. Otherwise it only says what is missing; the tests then
// fail with the same advice (never skip).
import { spawnSync } from "node:child_process";
import { findPostgresBin } from "./pg-cluster.mjs";

export function ensurePostgresBinaries() {
  if (process.env.PODKIT_TEST_DATABASE_URL || findPostgresBin()) return;
  const root = process.getuid?.() === 0;
  const hasAptGet = spawnSync("sh", ["-c", "command -v apt-get"], { stdio: "ignore" }).status === 0;
  if (!hasAptGet || (!root && spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status !== 0)) {
    console.error(
      "tests: PostgreSQL server binaries (initdb, pg_ctl) are missing and cannot be installed here; " +
        "install PostgreSQL (e.g. `apt-get install postgresql`) or set PODKIT_TEST_DATABASE_URL",
    );
    return;
  }
  console.log("tests: installing the distribution's postgresql package (for @podkit/store-postgres)");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const run = (args) =>
    spawnSync(
      root ? args[0] : "sudo",
      root ? args.slice(1) : ["-n", "env", "DEBIAN_FRONTEND=noninteractive", ...args],
      {
        stdio: ["ignore", "ignore", "inherit"],
        env,
      },
    );
  if (
    run(["apt-get", "update", "-qq"]).status !== 0 ||
    run(["apt-get", "install", "-y", "-qq", "postgresql"]).status !== 0
  ) {
    console.error(
      "tests: apt-get install postgresql failed; the store-postgres tests will say what is missing",
    );
  }
}
