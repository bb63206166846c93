import { RUN_DOMAIN } from "@podkit/dispatch";
import { describe, expect, it } from "vitest";
import { databaseUrl } from "../../store-postgres/test/helpers/database.js";
import { startDatabaseProxy } from "./helpers/proxy.js";
import { usePgWorlds } from "./helpers/world.js";

// The bad conditions of issue 27 on the real engine: the database goes away under a running
// worker, a session is missing or corrupt, a pod fails on every attempt.

const world = usePgWorlds();
const text = (value: string) => ({ parts: [{ type: "text" as const, text: value }] });

describe("PgDispatcher under bad conditions", { timeout: 180_000 }, () => {
  it("database down: the worker backs off and reconnects; the run is resumed, not lost, and the worker never crashes", async () => {
    const proxy = await startDatabaseProxy(databaseUrl());
    try {
      // The first answer comes slowly, so the database goes away while the turn waits for it.
      const w = await world({
        double: {
          responses: [{ ...text("late"), fault: { kind: "stall", afterEvents: 0, ms: 3_000 } }, text("done")],
        },
      });
      const { run } = await w.submit("hello", 5);
      w.worker(proxy.url);
      const started = Date.now();
      while (!w.events.some((e) => e.type === "claimed")) {
        if (Date.now() - started > 60_000) throw new Error("never claimed");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      proxy.cut();
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      proxy.restore();
      const settled = await w.settled(run.runId, 120_000);
      expect(settled.state).toBe("completed");
      expect(settled.attempts).toBeGreaterThanOrEqual(2);
      expect(w.events.some((e) => e.type === "warning")).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it("a missing session fails once with NotFoundError, recorded on the run; no retries", async () => {
    const w = await world();
    const { dispatcher } = w.connect();
    const runId = "0190e2c1-aaaa-7bbb-8ccc-0000000000a1";
    await dispatcher.submit(
      {
        runId,
        pod: "reviewer",
        sessionId: "0190e2c1-aaaa-7bbb-8ccc-0000000000a2",
        input: { segmentId: "0190e2c1-aaaa-7bbb-8ccc-0000000000a3", index: 1 },
      },
      { maxAttempts: 5 },
    );
    w.worker();
    const dead = await w.settled(runId);
    expect(dead).toMatchObject({ state: "dead", attempts: 1, error: { type: "NotFoundError" } });
    expect(dead.error?.message).toContain("not found");
  });

  it("a corrupt session fails once with CorruptEntryError naming the entry", async () => {
    const w = await world();
    const { run } = await w.submit("hello", 5);
    await w
      .admin()
      .query(
        `UPDATE "${w.storeSchema}".podkit_entries SET body = '{"kind":"user_input","ts":"soon"}' WHERE seq = 1`,
      );
    w.worker();
    const dead = await w.settled(run.runId);
    expect(dead).toMatchObject({ state: "dead", attempts: 1, error: { type: "CorruptEntryError" } });
    expect(dead.error?.message).toContain(`postgres:${w.storeSchema}/${run.sessionId}`);
  });

  it("a pod that fails on every attempt is retried a bounded number of times, then dead-lettered with the reason", async () => {
    // An overloaded provider: a transient failure, so retried (a refused request would not be).
    const w = await world({
      double: {
        respond: () => ({
          fault: {
            kind: "status",
            status: 529,
            retryAfter: 0,
            body: '{"type":"error","error":{"type":"overloaded_error","message":"provider is overloaded"}}',
          },
        }),
      },
    });
    const { run } = await w.submit("hello", 3);
    w.worker();
    const dead = await w.settled(run.runId, 120_000);
    expect(dead).toMatchObject({ state: "dead", attempts: 3 });
    expect(dead.error?.message).toContain("provider is overloaded");
    // pg-boss copied it to the dead-letter queue, with the reason.
    const { rows } = await w
      .admin()
      .query(
        `SELECT source_id::text, source_output FROM "${w.dispatchSchema}".job WHERE name = 'podkit.dead'`,
      );
    expect(rows).toHaveLength(1);
    expect(rows[0].source_id).toBe(run.runId);
    expect(JSON.stringify(rows[0].source_output)).toContain("provider is overloaded");
  });

  it("fires a [[schedule]] through pg-boss's cron as an ordinary run of a new session", async () => {
    const w = await world({
      manifestExtra: '[[schedule]]\nname = "every-second"\ncron = "* * * * * *"\ninput = "Scheduled check."',
      double: { loop: true, responses: [text("checked")] },
    });
    w.worker();
    const deadline = Date.now() + 60_000;
    let fired: { runId: string } | undefined;
    while (fired === undefined) {
      if (Date.now() > deadline) throw new Error("the schedule never fired");
      const event = w.events.find((e) => e.type === "fired");
      if (event?.type === "fired") fired = event;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const done = await w.settled(fired.runId);
    expect(done.state).toBe("completed");
    const { rows } = await w
      .admin()
      .query(
        `SELECT body FROM "${w.storeSchema}".podkit_entries e JOIN "${w.storeSchema}".podkit_segments s USING (segment_id) WHERE s.session_id = $1 AND seq = 1`,
        [done.sessionId],
      );
    expect(JSON.parse(rows[0].body)).toMatchObject({
      domain: RUN_DOMAIN,
      payload: { event: "submitted", input: "Scheduled check.", schedule: "every-second" },
    });
  });
});
