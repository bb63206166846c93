#!/usr/bin/env node
// A throwaway PostgreSQL cluster for tests and benches: initdb in a temp directory, start it on
// 127.0.0.1 at a free port, create a database, hand back its URL; stop it and delete the directory
// afterwards. Used by .ci/run, the @podkit/store-postgres test setup and the store-postgres bench.
//
// The server refuses to run as root, so as root every server command runs as the `postgres`
// system user (`runuser -u postgres -- …`) on a data directory that user owns.
//
//   node scripts/pg-cluster.mjs start   prints shell `export` lines (PODKIT_TEST_DATABASE_URL,
//                                        PODKIT_TEST_PG_DIR) for `eval`
//   node scripts/pg-cluster.mjs stop <dir>
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// The database initdb creates; tests isolate themselves in schemas of their own.
const DATABASE = "postgres";
const USER = "podkit";

/**
 * The directory holding initdb/pg_ctl: PODKIT_PG_BIN when set (and only it), else the one on PATH,
 * else the newest /usr/lib/postgresql/<n>/bin.
 */
export function findPostgresBin() {
  const chosen = process.env.PODKIT_PG_BIN;
  if (chosen)
    return existsSync(join(chosen, "initdb")) && existsSync(join(chosen, "pg_ctl")) ? chosen : undefined;
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  }
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const dir = join(base, version, "bin");
      if (existsSync(join(dir, "initdb"))) return dir;
    }
  }
  return undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function postgresIds() {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  if (!line) return undefined;
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

/** Runs a server binary, as the `postgres` user when we are root. */
function runServerCommand(bin, tool, args, asPostgres) {
  const command = asPostgres ? "runuser" : join(bin, tool);
  const argv = asPostgres ? ["-u", "postgres", "--", join(bin, tool), ...args] : args;
  try {
    return execFileSync(command, argv, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  } catch (error) {
    const output = `${error.stdout ?? ""}${error.stderr ?? ""}`.trim();
    throw new Error(`${tool} ${args.join(" ")} failed: ${output || error.message}`);
  }
}

function clusterError(reason) {
  return new Error(
    `cannot start a throwaway PostgreSQL cluster: ${reason}. Install PostgreSQL (e.g. \`apt-get install postgresql\`) ` +
      "or set PODKIT_TEST_DATABASE_URL to a database the tests may create schemas in.",
  );
}

/**
 * Starts a cluster and returns `{url, dir, stop()}`. Throws an Error saying what is missing
 * (binaries, the postgres user) and what to do instead.
 */
export async function startCluster() {
  const bin = findPostgresBin();
  if (!bin) {
    throw clusterError(
      process.env.PODKIT_PG_BIN
        ? `PODKIT_PG_BIN=${process.env.PODKIT_PG_BIN} holds no initdb and pg_ctl`
        : "initdb/pg_ctl are neither on PATH nor under /usr/lib/postgresql/*/bin",
    );
  }
  const asPostgres = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "podkit-pg-"));
  if (asPostgres) {
    const ids = postgresIds();
    if (!ids)
      throw clusterError("running as root and there is no `postgres` system user to run the server as");
    chownSync(dir, ids.uid, ids.gid);
  }
  const data = join(dir, "data");
  try {
    runServerCommand(
      bin,
      "initdb",
      ["-D", data, "-U", USER, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"],
      asPostgres,
    );
    const port = await freePort();
    // fsync off: a throwaway cluster need not survive a machine crash, and tests run faster.
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
    runServerCommand(
      bin,
      "pg_ctl",
      ["-D", data, "-o", options, "-l", join(dir, "server.log"), "-w", "start"],
      asPostgres,
    );
    const url = `postgres://${USER}@127.0.0.1:${port}/${DATABASE}`;
    return { url, dir, stop: () => stopCluster(dir) };
  } catch (error) {
    stopCluster(dir);
    throw clusterError(error.message);
  }
}

/** Stops the cluster in `dir` (immediately: it is thrown away) and deletes the directory. */
export function stopCluster(dir) {
  const bin = findPostgresBin();
  const data = join(dir, "data");
  if (bin && existsSync(join(data, "postmaster.pid"))) {
    try {
      runServerCommand(
        bin,
        "pg_ctl",
        ["-D", data, "-m", "immediate", "-w", "stop"],
        process.getuid?.() === 0,
      );
    } catch {
      // Already stopped; the directory goes anyway.
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, dir] = process.argv.slice(2);
  if (command === "start") {
    try {
      const cluster = await startCluster();
      console.log(`export PODKIT_TEST_DATABASE_URL='${cluster.url}'`);
      console.log(`export PODKIT_TEST_PG_DIR='${cluster.dir}'`);
    } catch (error) {
      console.error(error.message);
      process.exit(1);
    }
  } else if (command === "stop" && dir) {
    stopCluster(dir);
  } else {
    console.error("usage: node scripts/pg-cluster.mjs start | stop <dir>");
    process.exit(2);
  }
}
