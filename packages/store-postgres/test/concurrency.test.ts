import { describeSession, type Entry, restoreSession, SessionLog } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/index.js";
import { type Child, spawnChild } from "./helpers/children.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

const admin = useAdminPool();
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

interface Ack {
  batch: number;
  segmentId: string;
  drift: boolean;
}

async function texts(store: PostgresStore, sessionId: string, segmentId: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of store.readAll({ sessionId, segmentId }) as AsyncIterable<Entry>) {
    if (entry.kind === "user_input") found.push(entry.text);
  }
  return found;
}

describe("two processes with their own pools appending to one session", () => {
  it("never interleave: one keeps the segment, the other forks with lineage, every acknowledged entry is there", {
    timeout: 90_000,
  }, async () => {
    const schema = uniqueSchema();
    const store = new PostgresStore({ url: databaseUrl(), schema });
    cleanup.push(() => dropSchema(admin(), schema));
    cleanup.push(() => store.close());
    const log = await SessionLog.create(store, { systemPrompt: "race", config: {} });
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "before" },
      { kind: "turn_end", turn: 1 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    const source = log.segmentId;
    const batches = 40;
    const writers: Child[] = ["red", "blue"].map((name) =>
      spawnChild("writer-child.mjs", [
        databaseUrl(),
        schema,
        log.sessionId,
        source,
        name,
        String(batches),
        "2",
      ]),
    );
    cleanup.push(async () => {
      for (const writer of writers) writer.child.kill("SIGKILL");
    });
    for (const writer of writers) expect(await writer.next()).toBe("ready");
    for (const writer of writers) writer.send("go");
    const acks = await Promise.all(
      writers.map(async (writer) => {
        const lines: Ack[] = [];
        for (;;) {
          const line = await writer.next();
          if (line === "done") return lines;
          lines.push(JSON.parse(line) as Ack);
        }
      }),
    );

    const drifted = acks.map((list) => list.filter((ack) => ack.drift).length);
    expect(drifted.sort()).toEqual([0, 1]);
    const winner = acks.findIndex((list) => list.every((ack) => !ack.drift));
    const loser = 1 - winner;
    const names = ["red", "blue"];
    const expected = (w: number) =>
      Array.from({ length: batches }, (_, b) => [`${names[w]}-${b}-0`, `${names[w]}-${b}-1`]).flat();
    // The winner's entries, all of them, in order, and nobody else's.
    expect((acks[winner] as Ack[]).every((ack) => ack.segmentId === source)).toBe(true);
    expect(await texts(store, log.sessionId, source)).toEqual(["before", ...expected(winner)]);
    // The loser moved to one fork at its first append and wrote everything there.
    const forks = new Set((acks[loser] as Ack[]).map((ack) => ack.segmentId));
    expect(forks.size).toBe(1);
    const [fork] = [...forks] as [string];
    expect(fork).not.toBe(source);
    expect(await texts(store, log.sessionId, fork)).toEqual(expected(loser));
    const forkLog = await SessionLog.openSegment(store, { sessionId: log.sessionId, segmentId: fork });
    expect(forkLog.state.lineage.forkedFrom).toEqual({ segmentId: source, atTurn: 1 });

    // Restore is consistent: the head is one whole writer's line, the other is listed.
    const overview = await describeSession(store, log.sessionId);
    const state = await restoreSession(store, log.sessionId);
    const headWriter = overview.head.segmentId === source ? winner : loser;
    expect(
      state.history.map((item) => (item as unknown as { content: { text: string }[] }).content[0]?.text),
    ).toEqual(["before", ...expected(headWriter)]);
    expect(overview.otherBranches.map((info) => info.segmentId)).toEqual([
      overview.head.segmentId === source ? fork : source,
    ]);
  });
});
