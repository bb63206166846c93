import { copyFile, mkdir, readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FsStore } from "../src/fs/fs-store.js";
import { restoreSession, SessionLog } from "../src/log/session-log.js";
import type { SessionState } from "../src/replay/session-state.js";
import { useTempDirs } from "./helpers/temp-dir.js";

// Logs written by format v1, frozen. A later format adds fixtures/v2/ and keeps these passing.
const fixtures = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const v1 = join(fixtures, "v1");
const tempDir = useTempDirs();

const S_PLAIN = "01999eff-fa80-7d63-84e0-fe4d545b6269";
const G_PLAIN = "01999f00-e4e0-7375-815d-796c737a8188";
const G_FORK = "01999f03-a400-75aa-b6d2-eec9d0d7dee5";
const S_TOOLS = "01999f01-cf40-7986-bdd9-f48b9299a0a7";
const G_TOOLS = "01999f02-b9a0-7f98-ba56-73aab1b8bfc6";
const S_COMP = "01999f04-8e60-7bbc-b34f-69e8eff6fd04";
const G_CSRC = "01999f05-78c0-71ce-afcb-e4070e151c23";
const G_COMP = "01999f06-6320-77d0-a844-63262d343b42";
const S_INT = "01999f07-4d80-7de2-a4c0-de454c535a61";
const G_INT = "01999f08-37e0-73f4-a13d-59646b727980";

const PROMPT =
  "You are reviewer, a careful code reviewer.\n\nWorking boundaries:\nReadable:\n  - /work/repo\nWritable:\n  - /work/repo";
const CONFIG = { model: "anthropic/claude-sonnet-4-5", max_tokens: 8192, temperature: 0.2 };
const SIGNATURE =
  "EqQBCkgIBxABGAIiQFQm8mCn0b2n0d3VzaG9sZGVyLXNpZ25hdHVyZS1mb3ItZml4dHVyZXMAEgyMkHBzLmdsdeQ7YVkaDLhwnWz9Vt3/kN0+oyIwT0SjGa4w8kT6Zl0rfmbnXZpCb1N0Y2VzZ3l6R2ZkZ0hCN0hqR3VoR2x2YmN0YUhwcEFCMA==";

const text = (role: "user" | "assistant" | "system", value: string) => ({
  type: "message",
  role,
  content: [{ type: "text", text: value }],
});
const usage = (
  historyLen: number,
  inputTokens: number,
  cacheReadTokens: number,
  cacheWriteTokens: number,
  outputTokens: number,
) => ({ historyLen, inputTokens, cacheReadTokens, cacheWriteTokens, outputTokens });
const noLineage = { forkedFrom: null, compactedFrom: null };

/** A store holding the given fixture files (paths under fixtures/) under the ids their segment_start names. */
async function storeFrom(...paths: string[]): Promise<FsStore> {
  const root = await tempDir();
  for (const path of paths) {
    const first = JSON.parse((await readFile(join(fixtures, path), "utf8")).split("\n")[0] as string);
    await mkdir(join(root, first.session_id), { recursive: true });
    await copyFile(join(fixtures, path), join(root, first.session_id, `${first.segment_id}.jsonl`));
  }
  return new FsStore({ root });
}

const storeWith = (...files: string[]) => storeFrom(...files.map((file) => join("v1", file)));

async function segmentState(store: FsStore, sessionId: string, segmentId: string): Promise<SessionState> {
  return (await SessionLog.openSegment(store, { sessionId, segmentId })).state;
}

describe("format v1 fixture corpus", () => {
  it("replays a plain session: prompt, config change, history, turns, usage, extension state", async () => {
    const store = await storeWith("plain.jsonl");
    expect(await restoreSession(store, S_PLAIN)).toEqual({
      sessionId: S_PLAIN,
      segmentId: G_PLAIN,
      formatVersion: 1,
      systemPrompt: PROMPT,
      config: { ...CONFIG, temperature: 0 },
      history: [
        text("user", "What does this repository do?"),
        text("assistant", "It is a TypeScript runtime for LLM agents."),
        text("user", "日本語で要約してください 🙏"),
        text("assistant", "LLM エージェントのための TypeScript ランタイムです。"),
      ],
      historySources: [],
      turn: 2,
      interrupted: false,
      inFlight: null,
      usage: [usage(1, 1830, 0, 1790, 14), usage(3, 1871, 1790, 41, 22)],
      extensions: new Map([["memory.extract", { history_len: 4 }]]),
      lineage: noLineage,
      approvals: [],
      awaitingApproval: false,
      entryCount: 16,
    } satisfies SessionState);
  });

  it("replays tools and reasoning with provider metadata byte-identically", async () => {
    const store = await storeWith("tools-reasoning.jsonl");
    const state = await restoreSession(store, S_TOOLS);
    const history = [
      text("user", "Earlier context carried in the segment head."),
      text("user", "Fix the failing test in src/add.ts"),
      {
        type: "reasoning",
        text: "The test expects 3 for add(1, 2). Let me read the file.",
        provider_metadata: { anthropic: { signature: SIGNATURE } },
      },
      {
        type: "reasoning",
        text: "",
        provider_metadata: {
          anthropic: {
            redactedData: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfCXCzH",
          },
        },
      },
      {
        type: "tool_call",
        call_id: "toolu_01A09q90qw90lq917835lq9",
        name: "read_file",
        arguments: '{"path":"src/add.ts"}',
      },
      {
        type: "tool_result",
        call_id: "toolu_01A09q90qw90lq917835lq9",
        summary: "read src/add.ts (3 lines)",
        content: "export function add(a: number, b: number) {\n  return a - b;\n}\n",
      },
      {
        type: "tool_call",
        call_id: "toolu_01B7xk",
        name: "edit",
        arguments: '{"path":"src/add.ts","old":"a - b","new":"a + b"}',
        provider_metadata: { anthropic: { cacheControl: null } },
      },
      {
        type: "tool_result",
        call_id: "toolu_01B7xk",
        summary: "permission denied: src/add.ts is outside the writable scope",
        is_error: true,
      },
      text("system", "<notification>CI finished: 1 failing test</notification>"),
      {
        provider_metadata: {
          openai: {
            itemId: "rs_68c1f0a2d4e48190b1f2",
            reasoningEncryptedContent:
              "gAAAAABowfCiZ2F0ZXdheS1lbmNyeXB0ZWQtcmVhc29uaW5nLWJsb2ItZm9yLWZpeHR1cmVzLW9ubHk9PQ==",
          },
        },
        type: "reasoning",
        text: "**Scope**\n\nI cannot write there; explain instead.",
      },
      {
        type: "message",
        role: "assistant",
        content: [
          {
            type: "text",
            text: "`add` subtracts; change `a - b` to `a + b`. I could not write the file (outside the writable scope).",
            provider_metadata: { openai: { itemId: "msg_68c1f0a3" } },
          },
        ],
      },
    ];
    expect(state).toEqual({
      sessionId: S_TOOLS,
      segmentId: G_TOOLS,
      formatVersion: 1,
      systemPrompt: "You are a coder.",
      config: { model: "anthropic/claude-sonnet-4-5", max_tokens: 4096, reasoning: 2048 },
      history,
      historySources: [
        {
          index: 1,
          from: "user_input",
          segments: [
            { type: "text", text: "Fix the failing test in " },
            { type: "file", path: "src/add.ts" },
          ],
        },
        {
          index: 8,
          from: "system_item",
          item: {
            kind: "notification",
            body: "<notification>CI finished: 1 failing test</notification>",
            source: "ci",
          },
        },
      ],
      turn: 1,
      interrupted: false,
      inFlight: null,
      usage: [usage(2, 2410, 0, 2380, 96), usage(6, 2602, 2380, 222, 41), usage(7, 2700, 2602, 98, 63)],
      extensions: new Map(),
      lineage: noLineage,
      approvals: [],
      awaitingApproval: false,
      entryCount: 17,
    } satisfies SessionState);

    // Every stored item serializes back to exactly the bytes in the log (key order included).
    const lines = (await readFile(join(v1, "tools-reasoning.jsonl"), "utf8")).trimEnd().split("\n");
    const itemLines = lines.filter((line) => /^\{"kind":"(assistant_item|tool_result)"/.test(line));
    const storedItems = state.history.filter((item) => item.type !== "message" || item.role === "assistant");
    expect(itemLines.map((line) => line.slice(line.indexOf('"item":') + 7, -1))).toEqual(
      storedItems.map((item) => JSON.stringify(item)),
    );
  });

  it("replays a fork: the session restores from the fork, the source segment keeps its own state", async () => {
    const store = await storeWith("plain.jsonl", "forked.jsonl");
    expect(await store.listSegments(S_PLAIN)).toEqual([G_FORK, G_PLAIN]);
    expect(await restoreSession(store, S_PLAIN)).toEqual({
      sessionId: S_PLAIN,
      segmentId: G_FORK,
      formatVersion: 1,
      systemPrompt: PROMPT,
      config: CONFIG,
      history: [
        text("user", "What does this repository do?"),
        text("assistant", "It is a TypeScript runtime for LLM agents."),
        text("user", "Which license?"),
        text("assistant", "Apache-2.0."),
      ],
      historySources: [],
      turn: 2,
      interrupted: false,
      inFlight: null,
      usage: [usage(3, 1850, 1790, 60, 5)],
      extensions: new Map(),
      lineage: { forkedFrom: { segmentId: G_PLAIN, atTurn: 1 }, compactedFrom: null },
      approvals: [],
      awaitingApproval: false,
      entryCount: 7,
    } satisfies SessionState);
    expect((await segmentState(store, S_PLAIN, G_PLAIN)).turn).toBe(2);
    expect(await store.lookupSessionOf(G_PLAIN)).toBe(S_PLAIN);
  });

  it("replays a compacted pair: the new segment restores with the same prompt and a fresh usage history", async () => {
    const store = await storeWith("compacted-source.jsonl", "compacted.jsonl");
    expect(await restoreSession(store, S_COMP)).toEqual({
      sessionId: S_COMP,
      segmentId: G_COMP,
      formatVersion: 1,
      systemPrompt: PROMPT,
      config: CONFIG,
      history: [
        text(
          "user",
          "[Compacted context summary]\nThe user asked about the packages and session persistence; session-store persists sessions with UUIDv7 ids.",
        ),
        text("user", "How are ids ordered?"),
        text("assistant", "UUIDv7: lexical order is creation order."),
        text("system", "<context>\n## Memory\nPrefers short answers.\n</context>"),
        text("system", "<notification>build finished</notification>"),
        text("assistant", "Noted: the build finished."),
      ],
      historySources: [
        {
          index: 3,
          from: "system_item",
          item: { kind: "context", body: "<context>\n## Memory\nPrefers short answers.\n</context>" },
        },
        {
          index: 4,
          from: "system_item",
          item: { kind: "notification", body: "<notification>build finished</notification>" },
        },
      ],
      turn: 4,
      interrupted: false,
      inFlight: null,
      usage: [usage(5, 3100, 0, 3100, 9)],
      extensions: new Map(),
      lineage: { forkedFrom: null, compactedFrom: { segmentId: G_CSRC, atTurn: 3 } },
      approvals: [],
      awaitingApproval: false,
      entryCount: 8,
    } satisfies SessionState);
    const source = await segmentState(store, S_COMP, G_CSRC);
    expect(source).toMatchObject({ turn: 3, entryCount: 20, lineage: noLineage, systemPrompt: PROMPT });
    expect(source.history).toHaveLength(6);
    expect(source.usage).toEqual([
      usage(1, 40000, 0, 1000, 30),
      usage(3, 80000, 39000, 1000, 30),
      usage(5, 120000, 78000, 1000, 30),
    ]);
    expect(source.extensions).toEqual(new Map([["memory.extract", { history_len: 6 }]]));
  });

  it("replays a session that crashed mid-turn as interrupted with the turn in flight", async () => {
    const store = await storeWith("interrupted.jsonl");
    expect(await restoreSession(store, S_INT)).toEqual({
      sessionId: S_INT,
      segmentId: G_INT,
      formatVersion: 1,
      systemPrompt: null,
      config: { model: "openai/gpt-5", max_tokens: 2048 },
      history: [
        text("user", "Run the tests."),
        text("assistant", "Running them now."),
        { type: "tool_call", call_id: "call_Qm9vYmFy", name: "bash", arguments: '{"cmd":"pnpm test"}' },
      ],
      historySources: [],
      turn: 0,
      interrupted: true,
      inFlight: { trigger: "resume", entryIndex: 5 },
      usage: [usage(2, 900, 0, 0, 18)],
      extensions: new Map(),
      lineage: noLineage,
      approvals: [],
      awaitingApproval: false,
      entryCount: 8,
    } satisfies SessionState);
  });

  it("keeps appending to every restored v1 session without rewriting what was there", async () => {
    const files = (await readdir(v1)).filter((name) => name.endsWith(".jsonl"));
    const store = await storeWith(...files);
    for (const sessionId of await store.listSessions()) {
      const log = await SessionLog.open(store, sessionId);
      const path = store.segmentPath(log.ref);
      const before = await readFile(path, "utf8");
      await log.append({ kind: "config_changed", config: { max_tokens: 1 } });
      const after = await readFile(path, "utf8");
      expect(after.startsWith(before)).toBe(true);
      // A v1 segment stays v1: the new line is plain JSON, without seq and crc.
      expect(after.slice(before.length)).toMatch(
        /^\{"kind":"config_changed","ts":\d+,"config":\{"max_tokens":1\}\}\n$/,
      );
      expect((await restoreSession(store, sessionId)).config).toEqual({ max_tokens: 1 });
    }
    store.close();
  });
});

describe("fixture corpus across format versions", () => {
  it("every fixture of every format version still restores", async () => {
    const versions = (await readdir(fixtures)).filter((name) => /^v\d+$/.test(name));
    expect(versions).toContain("v1");
    for (const version of versions) {
      for (const file of (await readdir(join(fixtures, version))).filter((name) => name.endsWith(".jsonl"))) {
        const store = await storeFrom(join(version, file));
        const [sessionId] = await store.listSessions();
        const lines = (await readFile(join(fixtures, version, file), "utf8")).trimEnd().split("\n");
        const state = await restoreSession(store, sessionId as string);
        expect(state.entryCount, `${version}/${file}`).toBe(lines.length);
      }
    }
  });
});
