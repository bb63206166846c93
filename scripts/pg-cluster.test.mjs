import { existsSync } from "node:fs";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startCluster } from "./pg-cluster.mjs";

function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const savedBin = process.env.PODKIT_PG_BIN;
afterEach(() => {
  if (savedBin === undefined) delete process.env.PODKIT_PG_BIN;
  else process.env.PODKIT_PG_BIN = savedBin;
});

describe("scripts/pg-cluster.mjs (the throwaway PostgreSQL of CI, the store-postgres tests and bench)", () => {
  it("starts a cluster on 127.0.0.1 and stop() shuts it down and deletes its directory", async () => {
    const cluster = await startCluster();
    const port = Number(new URL(cluster.url).port);
    try {
      expect(cluster.url).toMatch(/^postgres:\/\/podkit@127\.0\.0\.1:\d+\/postgres$/);
      expect(await accepts(port)).toBe(true);
    } finally {
      cluster.stop();
    }
    expect(existsSync(cluster.dir)).toBe(false);
    expect(await accepts(port)).toBe(false);
  });

  it("fails with what is missing and what to do instead when there are no binaries", async () => {
    process.env.PODKIT_PG_BIN = "/nonexistent/postgresql/bin";
    await expect(startCluster()).rejects.toThrow(
      /cannot start a throwaway PostgreSQL cluster: PODKIT_PG_BIN=.* holds no initdb.*apt-get install postgresql.*PODKIT_TEST_DATABASE_URL/,
    );
  });
});
