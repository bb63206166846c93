import { copyFile, mkdir, readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FsStore } from "../src/fs/fs-store.js";
import { restoreSession, SessionLog } from "../src/log/session-log.js";
import type { SessionState } from "../src/replay/session-state.js";
import { useTempDirs } from "./helpers/temp-dir.js";

// Logs written by format v2, frozen: the v1 corpus re-framed (same entries, `seq` and `crc`
// added, `v: 2`), and an annotated session exercising what v2 added.
const fixtures = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const tempDir = useTempDirs();

const S_ANN = "01a0c000-0000-7000-8000-00000000a001";
const G_ANN_SOURCE = "01a0c000-0000-7000-8000-00000000a002";
const G_ANN_FORK = "01a0c000-0000-7000-8000-00000000a003";

async function storeFrom(...paths: string[]): Promise<FsStore> {
  const root = await tempDir();
  for (const path of paths) {
    const first = JSON.parse((await readFile(join(fixtures, path), "utf8")).split("\n")[0] as string);
    await mkdir(join(root, first.session_id), { recursive: true });
    await copyFile(join(fixtures, path), join(root, first.session_id, `${first.segment_id}.jsonl`));
  }
  return new FsStore({ root });
}

const text = (role: "user" | "assistant" | "system", value: string) => ({
  type: "message",
  role,
  content: [{ type: "text", text: value }],
});

describe("format v2 fixture corpus", () => {
  it("every re-framed v1 log restores to exactly the state of its v1 original", async () => {
    const files = (await readdir(join(fixtures, "v1"))).filter((name) => name.endsWith(".jsonl"));
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const file of files) {
      const v1 = await storeFrom(join("v1", file));
      const v2 = await storeFrom(join("v2", file));
      const [sessionId] = await v1.listSessions();
      const [segmentId] = await v1.listSegments(sessionId as string);
      const ref = { sessionId: sessionId as string, segmentId: segmentId as string };
      const old = (await SessionLog.openSegment(v1, ref)).state;
      const framed = (await SessionLog.openSegment(v2, ref)).state;
      expect(framed, file).toEqual({ ...old, formatVersion: 2 });
    }
  });

  it("restores the annotated session: system item kinds, user input segments, reasoning tokens, branches", async () => {
    const store = await storeFrom("v2/annotated-source.jsonl", "v2/annotated-fork.jsonl");
    const log = await SessionLog.open(store, S_ANN);
    expect(log.segmentId).toBe(G_ANN_FORK);
    expect(log.otherBranches.map((branch) => [branch.segmentId, branch.role, branch.entryCount])).toEqual([
      [G_ANN_SOURCE, "branch", 18],
    ]);
    expect(log.state).toEqual(ANNOTATED_FORK_STATE);

    // The source replays with a registered fold for the "tasks" domain; other domains stay latest-wins.
    const source = await SessionLog.openSegment(
      store,
      { sessionId: S_ANN, segmentId: G_ANN_SOURCE },
      {
        extensionFolds: {
          tasks: (state, payload) => [...((state as string[]) ?? []), (payload as { add: string }).add],
        },
      },
    );
    expect(source.state.extensions).toEqual(
      new Map<string, unknown>([
        ["memory.extract", { history_len: 4 }],
        ["tasks", ["book hotel", "compare prices"]],
      ]),
    );
    expect(source.state.usage).toEqual([
      {
        historyLen: 3,
        inputTokens: 2200,
        cacheReadTokens: 0,
        cacheWriteTokens: 2100,
        outputTokens: 180,
        reasoningTokens: 96,
      },
    ]);
  });

  it("keeps every stored item's bytes exactly as written inside its framed line", async () => {
    const store = await storeFrom("v2/tools-reasoning.jsonl");
    const [sessionId] = await store.listSessions();
    const state = await restoreSession(store, sessionId as string);
    const lines = (await readFile(join(fixtures, "v2", "tools-reasoning.jsonl"), "utf8"))
      .trimEnd()
      .split("\n");
    const itemLines = lines.filter((line) => /^\{"kind":"(assistant_item|tool_result)"/.test(line));
    const storedItems = state.history.filter((item) => item.type !== "message" || item.role === "assistant");
    expect(
      itemLines.map((line) => line.slice(line.indexOf('"item":') + 7, line.lastIndexOf(',"seq":'))),
    ).toEqual(storedItems.map((item) => JSON.stringify(item)));
  });
});

const CONTEXT = { kind: "context", body: "<context>\n## Memory\nThe user plans trips.\n</context>" } as const;
const ATTACHMENT = {
  kind: "attachment",
  body: '<attachment path="notes.md">temples, 3 days</attachment>',
  path: "notes.md",
} as const;
const NOTIFICATION = {
  kind: "notification",
  body: "<notification>hotel prices dropped</notification>",
} as const;
const INTERRUPT = { kind: "interrupt", body: "<interrupt>the user stopped this turn</interrupt>" } as const;

/** The drift fork carries the source's state over, history sources included. */
const ANNOTATED_FORK_STATE = {
  sessionId: S_ANN,
  segmentId: G_ANN_FORK,
  formatVersion: 2,
  systemPrompt: "You are a planner.",
  config: { model: "openai/gpt-5", max_tokens: 4096 },
  history: [
    text("system", CONTEXT.body),
    text("user", "Plan Kyoto — see notes.md"),
    text("system", ATTACHMENT.body),
    {
      type: "reasoning",
      text: "Three days, temples first.",
      provider_metadata: { openai: { itemId: "rs_0a1", reasoningEncryptedContent: "gAAAAABo-v2-fixture==" } },
    },
    text("assistant", "Day 1: Fushimi Inari. Day 2: Kinkaku-ji. Day 3: Arashiyama."),
    text("system", NOTIFICATION.body),
    text("system", INTERRUPT.body),
    text("user", "Continue."),
  ],
  historySources: [
    { index: 0, from: "system_item", item: CONTEXT },
    {
      index: 1,
      from: "user_input",
      segments: [
        { type: "text", text: "Plan Kyoto — see " },
        { type: "file", path: "notes.md" },
      ],
    },
    { index: 2, from: "system_item", item: ATTACHMENT },
    { index: 5, from: "system_item", item: NOTIFICATION },
    { index: 6, from: "system_item", item: INTERRUPT },
  ],
  turn: 1,
  interrupted: true,
  inFlight: { trigger: "user", entryIndex: 5 },
  usage: [
    {
      historyLen: 3,
      inputTokens: 2200,
      cacheReadTokens: 0,
      cacheWriteTokens: 2100,
      outputTokens: 180,
      reasoningTokens: 96,
    },
  ],
  extensions: new Map<string, unknown>([
    ["memory.extract", { history_len: 4 }],
    ["tasks", { add: "compare prices" }],
  ]),
  lineage: { forkedFrom: { segmentId: G_ANN_SOURCE, atTurn: 1 }, compactedFrom: null },
  approvals: [],
  awaitingApproval: false,
  entryCount: 7,
} satisfies SessionState;
