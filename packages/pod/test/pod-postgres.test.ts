import { existsSync } from "node:fs";
import type { Item } from "@podkit/llm-worker";
import { sessionsRoot } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import type { ScriptedResponse } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import type { Pod } from "../src/pod/pod.js";
import { compactionTable, compactResponder } from "./compaction-harness.js";
import { testTools, text, toolCall, usePodWorlds, type World } from "./pod-harness.js";
import { installStorePackage } from "./store-workspace.js";

const database = usePostgresDatabases();
const world = usePodWorlds();

// No `{{ cwd }}`: every world has its own temp workspace, and the requests of two worlds must match.
const SYSTEM_PROMPT = "You are the byte-identity pod. date={{ date }} tools={{ tools | length }}";
const URL_VARIABLE = "POD_TEST_DATABASE_URL";

interface Turn {
  input: string;
  responses: ScriptedResponse[];
}

/** Three turns: reasoning with a signature and a tool call, plain text, another tool call. */
const TURNS: Turn[] = [
  {
    input: "one",
    responses: [
      {
        parts: [
          { type: "reasoning", text: "ping first", signature: "sig-one" },
          { type: "tool_call", id: "toolu_one", name: "ping", arguments: { n: 1, note: "ü ✓ 🚀" } },
        ],
      },
      text("ran ping"),
    ],
  },
  { input: "two", responses: [text("second answer")] },
  { input: "three", responses: [toolCall("ping", { n: 3 }, "toolu_three"), text("third answer")] },
];
const [FIRST, SECOND, THIRD] = TURNS as [Turn, Turn, Turn];

/** Compaction on request only (thresholds far away), with a small retained part. */
const MANUAL_COMPACTION = compactionTable({
  threshold: 100000,
  request_threshold: 100000,
  retained_tokens: 40,
});
const COMPACT = "compact" as const;

interface Backend {
  manifestExtra: string;
  env: Record<string, string>;
  /** The store package, installed in the workspace the way a project installs it. */
  install?: (workspace: string) => Promise<void>;
}

const filesystem: Backend = { manifestExtra: "", env: {} };
const postgres = (url: string): Backend => ({
  manifestExtra: `[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n`,
  env: { [URL_VARIABLE]: url },
  install: installStorePackage,
});

/**
 * Runs TURNS on a fresh world on `backend` (the store the manifest selects: no `store` option),
 * closing the pod and restoring the session from the store before each turn in `restoreBefore`.
 * Returns the raw bodies of every request the model received, and the world.
 */
async function scriptedSession(
  backend: Backend,
  restoreBefore: readonly number[],
  turns: readonly (Turn | typeof COMPACT)[] = TURNS,
) {
  const compacts = turns.includes(COMPACT);
  const w: World = await world({
    systemPrompt: SYSTEM_PROMPT,
    manifestExtra: `${backend.manifestExtra}\n${compacts ? MANUAL_COMPACTION : ""}`,
    toolPackages: [testTools({ ping: (args) => `pong ${JSON.stringify(args)}` })],
    ...(compacts
      ? {
          double: {
            measureInputTokens: true,
            respond: compactResponder({ summary: "pinged once, answered twice" }),
          },
        }
      : {}),
  });
  await backend.install?.(w.workspace);
  const options = { env: { ANTHROPIC_API_KEY: "test-key", ...backend.env } };
  let pod: Pod = await w.pod(options);
  for (const [i, turn] of turns.entries()) {
    if (restoreBefore.includes(i)) {
      const sessionId = pod.sessionId as string;
      await pod.close();
      pod = await w.restore(sessionId, options);
    }
    if (turn === COMPACT) {
      expect(await pod.compact()).toMatchObject({ status: "compacted" });
      continue;
    }
    w.double.enqueue(...turn.responses);
    expect(await pod.run(turn.input)).toMatchObject({ status: "finished" });
  }
  const sessionId = pod.sessionId as string;
  await pod.close();
  return { requests: w.double.requests.map((request) => request.rawBody), sessionId, world: w };
}

describe("a Pod on the PostgreSQL store (issue 17)", () => {
  it("restores byte-identically: the requests after Pod.restore equal those of a pod that never stopped, and the filesystem's", async () => {
    const url = await database();
    const continuous = await scriptedSession(postgres(url), []);
    const restored = await scriptedSession(postgres(url), [1, 2]);
    const onFilesystem = await scriptedSession(filesystem, [1, 2]);

    // The comparison is not vacuous: five requests, the later ones carrying the restored history
    // (the reasoning signature, the tool call and result, the non-ASCII arguments) verbatim.
    expect(restored.requests).toHaveLength(5);
    const afterRestores = restored.requests[3] as string;
    for (const fragment of ["sig-one", "toolu_one", "pong", "second answer", "ü ✓ 🚀"]) {
      expect(afterRestores).toContain(fragment);
    }
    expect(restored.requests).toEqual(continuous.requests);
    expect(onFilesystem.requests).toEqual(restored.requests);

    // The sessions really live in PostgreSQL, not in the workspace.
    expect(existsSync(sessionsRoot(restored.world.workspace))).toBe(false);
    expect(existsSync(sessionsRoot(onFilesystem.world.workspace))).toBe(true);
    const store = new PostgresStore<Item>({ url });
    try {
      expect(await store.listSessions()).toEqual(
        expect.arrayContaining([continuous.sessionId, restored.sessionId]),
      );
      const [segmentId] = await store.listSegments(restored.sessionId);
      const summary = await store.describeSegment({
        sessionId: restored.sessionId,
        segmentId: segmentId as string,
      });
      expect(summary.last).toMatchObject({ kind: "run_completed", result: "finished" });
    } finally {
      await store.close();
    }
  });

  it("runs, compacts and restores: every request, the compaction worker's included, equals the filesystem's", async () => {
    const url = await database();
    const script: (Turn | typeof COMPACT)[] = [
      FIRST,
      SECOND,
      COMPACT,
      THIRD,
      { input: "four", responses: [text("fourth")] },
    ];
    const continuous = await scriptedSession(postgres(url), [], script);
    const restored = await scriptedSession(postgres(url), [3, 4], script);
    const onFilesystem = await scriptedSession(filesystem, [3, 4], script);
    // Main requests and the compaction worker's (which sees the pre-compaction history).
    expect(restored.requests.length).toBeGreaterThanOrEqual(7);
    expect(restored.requests.some((body) => body.includes("write_summary"))).toBe(true);
    expect(restored.requests.at(-1)).toContain("pinged once, answered twice");
    expect(restored.requests).toEqual(continuous.requests);
    expect(onFilesystem.requests).toEqual(restored.requests);
    const store = new PostgresStore<Item>({ url });
    try {
      expect(await store.listSegments(restored.sessionId)).toHaveLength(2);
    } finally {
      await store.close();
    }
  });

  it("a restored pod continues the same segment, with history, turn count and usage from the database", async () => {
    const url = await database();
    const { sessionId, world: w } = await scriptedSession(postgres(url), []);
    const pod = await w.restore(sessionId, { env: { ANTHROPIC_API_KEY: "test-key", [URL_VARIABLE]: url } });
    expect(pod.turn).toBe(3);
    expect(pod.usage).toHaveLength(5);
    expect(pod.history.map((item) => item.type)).toEqual([
      "message",
      "reasoning",
      "tool_call",
      "tool_result",
      "message",
      "message",
      "message",
      "message",
      "tool_call",
      "tool_result",
      "message",
    ]);
    const store = new PostgresStore<Item>({ url });
    try {
      expect(await store.listSegments(sessionId)).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
