import { readdirSync, readFileSync } from "node:fs";
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ApprovalRecord, SessionState } from "../../src/replay/session-state.js";
import type { SegmentRef } from "../../src/store/store.js";

// The frozen fixture corpus (test/fixtures/v<N>/*.jsonl, docs/session-store.md "Format versions")
// and the exact state each fixture restores to, written out by hand. Every store's tests restore
// every fixture and compare with these (FsStore here, PostgresStore in packages/store-postgres);
// a fixture without an expected state here fails the corpus test. Files named `future-*` are logs
// from a newer podkit: every store must refuse them with `UnsupportedFormatError`.

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures");

/** `v1/plain.jsonl`, … for every fixture of every format version folder. */
export function fixtureNames(): string[] {
  const names: string[] = [];
  for (const version of readdirSync(FIXTURES)
    .filter((name) => /^v\d+$/.test(name))
    .sort()) {
    for (const file of readdirSync(join(FIXTURES, version)).sort()) {
      if (file.endsWith(".jsonl")) names.push(`${version}/${file}`);
    }
  }
  return names;
}

/** A log from a newer podkit, and what its `UnsupportedFormatError` must say. */
export interface FutureFixture {
  line: number;
  kind?: string;
  version?: number;
}

/** The `future-*` fixtures: refused with `UnsupportedFormatError`, never `CorruptEntryError`. */
export const FUTURE_FIXTURES: Readonly<Record<string, FutureFixture>> = {
  "v3/future-kind.jsonl": { line: 8, kind: "checkpoint" },
  "v3/future-version.jsonl": { line: 1, version: 4 },
};

export const isFutureFixture = (name: string) => /\/future-[^/]*$/.test(name);

/** The committed lines of fixture `name` (`v2/plain.jsonl`), without their newlines. */
export function fixtureLines(name: string): string[] {
  return readFileSync(join(FIXTURES, name), "utf8").trimEnd().split("\n");
}

/** The fixture's ref: the ids its `segment_start` names. */
export function fixtureRef(name: string): SegmentRef {
  const start = JSON.parse(fixtureLines(name)[0] as string) as { session_id: string; segment_id: string };
  return { sessionId: start.session_id, segmentId: start.segment_id };
}

/**
 * The fixture's entries as a store that does not frame lines holds them (a database row): each
 * line without the `seq` and `crc` FsStore's framed formats append (v1 lines have none).
 */
export function fixtureEntryTexts(name: string): string[] {
  return fixtureLines(name).map((line) => {
    const frame = line.lastIndexOf(',"seq":');
    return frame === -1 || !line.endsWith('"}') ? line : `${line.slice(0, frame)}}`;
  });
}

/** Copies fixtures into an FsStore root as `<session>/<segment>.jsonl`, under the ids they name. */
export async function plantFixtures(root: string, ...names: string[]): Promise<SegmentRef[]> {
  const refs: SegmentRef[] = [];
  for (const name of names) {
    const ref = fixtureRef(name);
    await mkdir(join(root, ref.sessionId), { recursive: true });
    await copyFile(join(FIXTURES, name), join(root, ref.sessionId, `${ref.segmentId}.jsonl`));
    refs.push(ref);
  }
  return refs;
}

const text = (role: "user" | "assistant" | "system", value: string) => ({
  type: "message",
  role,
  content: [{ type: "text", text: value }],
});
const call = (callId: string, name: string, args: string) => ({
  type: "tool_call",
  call_id: callId,
  name,
  arguments: args,
});
const usage = (
  historyLen: number,
  inputTokens: number,
  cacheReadTokens: number,
  cacheWriteTokens: number,
  outputTokens: number,
) => ({ historyLen, inputTokens, cacheReadTokens, cacheWriteTokens, outputTokens });
const noLineage = { forkedFrom: null, compactedFrom: null };
const noApprovals = { approvals: [] as ApprovalRecord[], awaitingApproval: false };

// ---- format v1 (and the same logs re-framed in v2) ----

const PROMPT =
  "You are reviewer, a careful code reviewer.\n\nWorking boundaries:\nReadable:\n  - /work/repo\nWritable:\n  - /work/repo";
const CONFIG = { model: "anthropic/claude-sonnet-4-5", max_tokens: 8192, temperature: 0.2 };
const SIGNATURE =
  "EqQBCkgIBxABGAIiQFQm8mCn0b2n0d3VzaG9sZGVyLXNpZ25hdHVyZS1mb3ItZml4dHVyZXMAEgyMkHBzLmdsdeQ7YVkaDLhwnWz9Vt3/kN0+oyIwT0SjGa4w8kT6Zl0rfmbnXZpCb1N0Y2VzZ3l6R2ZkZ0hCN0hqR3VoR2x2YmN0YUhwcEFCMA==";

export const V1 = {
  S_PLAIN: "01999eff-fa80-7d63-84e0-fe4d545b6269",
  G_PLAIN: "01999f00-e4e0-7375-815d-796c737a8188",
  G_FORK: "01999f03-a400-75aa-b6d2-eec9d0d7dee5",
  S_TOOLS: "01999f01-cf40-7986-bdd9-f48b9299a0a7",
  G_TOOLS: "01999f02-b9a0-7f98-ba56-73aab1b8bfc6",
  S_COMP: "01999f04-8e60-7bbc-b34f-69e8eff6fd04",
  G_CSRC: "01999f05-78c0-71ce-afcb-e4070e151c23",
  G_COMP: "01999f06-6320-77d0-a844-63262d343b42",
  S_INT: "01999f07-4d80-7de2-a4c0-de454c535a61",
  G_INT: "01999f08-37e0-73f4-a13d-59646b727980",
} as const;

const V1_PLAIN = {
  sessionId: V1.S_PLAIN,
  segmentId: V1.G_PLAIN,
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
  ...noApprovals,
  entryCount: 16,
} satisfies SessionState;

const V1_TOOLS = {
  sessionId: V1.S_TOOLS,
  segmentId: V1.G_TOOLS,
  formatVersion: 1,
  systemPrompt: "You are a coder.",
  config: { model: "anthropic/claude-sonnet-4-5", max_tokens: 4096, reasoning: 2048 },
  history: [
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
  ],
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
  ...noApprovals,
  entryCount: 17,
} satisfies SessionState;

const V1_FORKED = {
  sessionId: V1.S_PLAIN,
  segmentId: V1.G_FORK,
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
  lineage: { forkedFrom: { segmentId: V1.G_PLAIN, atTurn: 1 }, compactedFrom: null },
  ...noApprovals,
  entryCount: 7,
} satisfies SessionState;

const V1_COMPACTED_SOURCE = {
  sessionId: V1.S_COMP,
  segmentId: V1.G_CSRC,
  formatVersion: 1,
  systemPrompt: PROMPT,
  config: CONFIG,
  history: [
    text("user", "List the packages."),
    text("assistant", "manifest, llm-worker, session-store, pod, memory, tools, testkit, cli."),
    text("user", "Which one persists sessions?"),
    text("assistant", "session-store."),
    text("user", "How are ids ordered?"),
    text("assistant", "UUIDv7: lexical order is creation order."),
  ],
  historySources: [],
  turn: 3,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 40000, 0, 1000, 30), usage(3, 80000, 39000, 1000, 30), usage(5, 120000, 78000, 1000, 30)],
  extensions: new Map([["memory.extract", { history_len: 6 }]]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 20,
} satisfies SessionState;

const V1_COMPACTED = {
  sessionId: V1.S_COMP,
  segmentId: V1.G_COMP,
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
  lineage: { forkedFrom: null, compactedFrom: { segmentId: V1.G_CSRC, atTurn: 3 } },
  ...noApprovals,
  entryCount: 8,
} satisfies SessionState;

const V1_INTERRUPTED = {
  sessionId: V1.S_INT,
  segmentId: V1.G_INT,
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
  ...noApprovals,
  entryCount: 8,
} satisfies SessionState;

const V1_STATES: Record<string, SessionState> = {
  "plain.jsonl": V1_PLAIN,
  "tools-reasoning.jsonl": V1_TOOLS,
  "forked.jsonl": V1_FORKED,
  "compacted-source.jsonl": V1_COMPACTED_SOURCE,
  "compacted.jsonl": V1_COMPACTED,
  "interrupted.jsonl": V1_INTERRUPTED,
};

// ---- format v2: the annotated pair ----

export const V2 = {
  S_ANN: "01a0c000-0000-7000-8000-00000000a001",
  G_ANN_SOURCE: "01a0c000-0000-7000-8000-00000000a002",
  G_ANN_FORK: "01a0c000-0000-7000-8000-00000000a003",
  S_APPROVALS: "01a24a00-0000-7000-8000-0000000002a1",
  G_APPROVALS: "01a24a00-0000-7000-8000-0000000002a2",
  S_PARENT: "01a24a00-0000-7000-8000-0000000002b1",
  G_PARENT: "01a24a00-0000-7000-8000-0000000002b2",
  S_CHILD: "01a24a00-0000-7000-8000-0000000002b3",
  G_CHILD: "01a24a00-0000-7000-8000-0000000002b4",
} as const;

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
const KYOTO_HISTORY = [
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
];
const KYOTO_SOURCES = [
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
] satisfies SessionState["historySources"];
const KYOTO_USAGE = [
  {
    historyLen: 3,
    inputTokens: 2200,
    cacheReadTokens: 0,
    cacheWriteTokens: 2100,
    outputTokens: 180,
    reasoningTokens: 96,
  },
];

/** The source of the annotated pair: two turns, the second paused by an interrupt; a config change after. */
const V2_ANNOTATED_SOURCE = {
  sessionId: V2.S_ANN,
  segmentId: V2.G_ANN_SOURCE,
  formatVersion: 2,
  systemPrompt: "You are a planner.",
  config: { model: "openai/gpt-5", max_tokens: 8192 },
  history: KYOTO_HISTORY,
  historySources: KYOTO_SOURCES,
  turn: 1,
  interrupted: true,
  inFlight: null,
  usage: KYOTO_USAGE,
  // No fold registered: each domain keeps its latest payload.
  extensions: new Map<string, unknown>([
    ["memory.extract", { history_len: 4 }],
    ["tasks", { add: "compare prices" }],
  ]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 18,
} satisfies SessionState;

/** The drift fork carries the source's state over, history sources included. */
export const V2_ANNOTATED_FORK = {
  sessionId: V2.S_ANN,
  segmentId: V2.G_ANN_FORK,
  formatVersion: 2,
  systemPrompt: "You are a planner.",
  config: { model: "openai/gpt-5", max_tokens: 4096 },
  history: [...KYOTO_HISTORY, text("user", "Continue.")],
  historySources: KYOTO_SOURCES,
  turn: 1,
  interrupted: true,
  inFlight: { trigger: "user", entryIndex: 5 },
  usage: KYOTO_USAGE,
  extensions: new Map<string, unknown>([
    ["memory.extract", { history_len: 4 }],
    ["tasks", { add: "compare prices" }],
  ]),
  lineage: { forkedFrom: { segmentId: V2.G_ANN_SOURCE, atTurn: 1 }, compactedFrom: null },
  ...noApprovals,
  entryCount: 7,
} satisfies SessionState;

// ---- approvals: what main wrote in v2, and the same session in v3 with a delegated call ----

const OPS_PROMPT =
  "You are ops, a careful release engineer.\n\n## Working boundaries\nFile access is limited to the paths below. Tools refuse every path outside them, and a refusal is final: do not try to reach such a path another way (through a link, a shell command or a copy).\n\nReadable:\n  - /work/app\nWritable:\n  - /work/app";
const OPS_CONFIG = { model: "anthropic/claude-sonnet-4-5", max_tokens: 8192 };
const INTERRUPTED_SUMMARY =
  "Interrupted: the user stopped the turn before this tool call finished, so it may not have run, or may have run only in part. Check the current state before relying on its effect.";
const INTERRUPT_NOTE = {
  kind: "interrupt",
  body: "[The previous turn was interrupted by the user before it finished. Its work may be incomplete, and tool calls without a result did not complete. The user's next message follows: act on it, and resume the interrupted work only if it asks you to.]",
} as const;

/** The history of the approvals session's first three turns and the fourth's input (v2 and v3 alike). */
const OPS_HISTORY = [
  text("user", "Build the release."),
  call("toolu_01make", "bash", '{"command":"make release"}'),
  {
    type: "tool_result",
    call_id: "toolu_01make",
    summary: "make release: ok",
    content: "built dist/app-1.4.0.tgz\n",
  },
  text("assistant", "Built dist/app-1.4.0.tgz."),
  text("user", "List the artifacts."),
  call("toolu_02ls", "bash", '{"command":"ls dist"}'),
  { type: "tool_result", call_id: "toolu_02ls", summary: "ls dist", content: "app-1.4.0.tgz\n" },
  text("assistant", "One artifact: app-1.4.0.tgz."),
  text("user", "Deploy it."),
  call("toolu_03deploy", "deploy", '{"target":"prod"}'),
  { type: "tool_result", call_id: "toolu_03deploy", summary: INTERRUPTED_SUMMARY, is_error: true },
  text("system", INTERRUPT_NOTE.body),
  text("user", "Never mind, staging only."),
  text("assistant", "Understood: nothing goes to prod."),
  text("user", "Clean up and have the build reviewed."),
  call("toolu_04rm", "bash", '{"command":"rm -rf build"}'),
];
const OPS_USAGE = [
  usage(1, 1820, 0, 1790, 31),
  usage(3, 1902, 1790, 112, 12),
  usage(5, 1950, 1902, 48, 9),
  usage(7, 1990, 1950, 40, 8),
  usage(9, 2030, 1990, 40, 14),
  usage(13, 2210, 2030, 180, 10),
  usage(15, 2260, 2210, 50, 40),
];

/** The approvals of the session (`at` of the fixture's clock, whose first tick is `t0 + 1375`). */
function opsApprovals(t0: number): ApprovalRecord[] {
  const at = (tick: number) => t0 + tick * 1375;
  return [
    // Answered from outside while the run was over, then resumed and run.
    {
      callId: "toolu_01make",
      tool: "bash",
      arguments: '{"command":"make release"}',
      podPath: ["root"],
      askedBy: "bash",
      requestedAt: at(6),
      closed: true,
      answer: { decision: "allow", reason: "release window is open", by: "alice@desk", at: at(8) },
    },
    // Answered by the run's own approver while it waited.
    {
      callId: "toolu_02ls",
      tool: "bash",
      arguments: '{"command":"ls dist"}',
      podPath: ["root"],
      askedBy: "bash",
      requestedAt: at(19),
      closed: true,
      answer: { decision: "allow", by: "ops@desk", at: at(20), inRun: true },
    },
    // Never answered: a new run closed it as interrupted.
    {
      callId: "toolu_03deploy",
      tool: "deploy",
      arguments: '{"target":"prod"}',
      podPath: ["root"],
      askedBy: "prod-guard",
      reason: "deploys to prod need a second pair of eyes",
      requestedAt: at(30),
      closed: true,
    },
  ];
}

const V2_APPROVALS = {
  sessionId: V2.S_APPROVALS,
  segmentId: V2.G_APPROVALS,
  formatVersion: 2,
  systemPrompt: OPS_PROMPT,
  config: OPS_CONFIG,
  history: OPS_HISTORY,
  historySources: [{ index: 11, from: "system_item", item: INTERRUPT_NOTE }],
  turn: 3,
  interrupted: true,
  inFlight: null,
  usage: OPS_USAGE,
  extensions: new Map(),
  lineage: noLineage,
  approvals: [
    ...opsApprovals(1796000000000),
    {
      callId: "toolu_04rm",
      tool: "bash",
      arguments: '{"command":"rm -rf build"}',
      podPath: ["root"],
      askedBy: "bash",
      requestedAt: 1796000000000 + 44 * 1375,
      closed: false,
    },
  ],
  awaitingApproval: true,
  entryCount: 45,
} satisfies SessionState;

// ---- sub-pods: a root and its child (v2), a root, child and grandchild (v3) ----

const boundaries = (first: string, path: string) =>
  `${first}\n\n## Working boundaries\nFile access is limited to the paths below. Tools refuse every path outside them, and a refusal is final: do not try to reach such a path another way (through a link, a shell command or a copy).\n\nReadable:\n  - ${path}\nWritable:\n  - ${path}`;
const ROOT_PROMPT = boundaries("ROOT: you lead the work.", "/work/app");
const WORKER_PROMPT = boundaries("WORKER: you implement what you are asked.", "/work/app/src");

function rootState(
  v: number,
  sessionId: string,
  segmentId: string,
  childId: string,
  childUsage: string,
): SessionState {
  return {
    sessionId,
    segmentId,
    formatVersion: v,
    systemPrompt: ROOT_PROMPT,
    config: { max_tokens: 8192 },
    history: [
      text("user", "Implement the parser and have it reviewed."),
      call("call-root", "spawn_pod", '{"role":"worker","task":"implement the parser"}'),
      {
        type: "tool_result",
        call_id: "call-root",
        summary: `{"id":"${childId}","role":"worker","answer":"Parser implemented in src/parse.ts.","usage":${childUsage}}`,
      },
      text("assistant", "Done: the parser is in and reviewed."),
    ],
    historySources: [],
    turn: 1,
    interrupted: false,
    inFlight: null,
    usage: [usage(1, 1200, 0, 1180, 22), usage(3, 1290, 1200, 90, 9)],
    extensions: new Map(),
    lineage: noLineage,
    ...noApprovals,
    entryCount: 10,
  };
}

const V2_SUBPOD_PARENT = rootState(
  2,
  V2.S_PARENT,
  V2.G_PARENT,
  V2.S_CHILD,
  '{"requests":1,"input_tokens":900,"output_tokens":30}',
);

const V2_SUBPOD_CHILD = {
  sessionId: V2.S_CHILD,
  segmentId: V2.G_CHILD,
  formatVersion: 2,
  systemPrompt: WORKER_PROMPT,
  config: { max_tokens: 8192 },
  history: [text("user", "implement the parser"), text("assistant", "Parser implemented in src/parse.ts.")],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 900, 0, 880, 30)],
  extensions: new Map(),
  lineage: noLineage,
  ...noApprovals,
  parent: { session_id: V2.S_PARENT, call_id: "call-root", role: "worker", depth: 1 },
  entryCount: 7,
} satisfies SessionState;

// ---- format v3 ----

export const V3 = {
  S_APPROVALS: "01a30000-0000-7000-8000-0000000003a1",
  G_APPROVALS: "01a30000-0000-7000-8000-0000000003a2",
  /** The child session the delegated call of the approvals session waits on (not in the corpus). */
  S_DELEGATED_CHILD: "01a30000-0000-7000-8000-0000000003a9",
  S_ROOT: "01a30000-0000-7000-8000-0000000003b1",
  G_ROOT: "01a30000-0000-7000-8000-0000000003b2",
  S_WORKER: "01a30000-0000-7000-8000-0000000003b3",
  G_WORKER: "01a30000-0000-7000-8000-0000000003b4",
  S_REVIEWER: "01a30000-0000-7000-8000-0000000003b5",
  G_REVIEWER: "01a30000-0000-7000-8000-0000000003b6",
  S_DISPATCHED: "01a30000-0000-7000-8000-0000000003c1",
  G_DISPATCHED: "01a30000-0000-7000-8000-0000000003c2",
  RUN_A: "01a30000-0000-7000-8000-0000000003ca",
  RUN_B: "01a30000-0000-7000-8000-0000000003cb",
  S_BUDGET: "01a30000-0000-7000-8000-0000000003d1",
  G_BUDGET: "01a30000-0000-7000-8000-0000000003d2",
} as const;

const V3_APPROVALS = {
  sessionId: V3.S_APPROVALS,
  segmentId: V3.G_APPROVALS,
  formatVersion: 3,
  systemPrompt: OPS_PROMPT,
  config: OPS_CONFIG,
  history: [
    ...OPS_HISTORY,
    call("toolu_05spawn", "spawn_pod", '{"role":"reviewer","task":"review dist/app-1.4.0.tgz"}'),
  ],
  historySources: [{ index: 11, from: "system_item", item: INTERRUPT_NOTE }],
  turn: 3,
  interrupted: true,
  inFlight: null,
  usage: OPS_USAGE,
  extensions: new Map(),
  lineage: noLineage,
  approvals: [
    ...opsApprovals(1797000000000),
    // Pending: asked of the builtin policy, nobody has answered yet.
    {
      callId: "toolu_04rm",
      tool: "bash",
      arguments: '{"command":"rm -rf build"}',
      podPath: ["root"],
      askedBy: "bash",
      requestedAt: 1797000000000 + 45 * 1375,
      closed: false,
    },
    // Delegated: the sub-pod call waits on the approvals of its child session; never answered itself.
    {
      callId: "toolu_05spawn",
      tool: "spawn_pod",
      arguments: '{"role":"reviewer","task":"review dist/app-1.4.0.tgz"}',
      podPath: ["root"],
      askedBy: "subpod",
      childSessionId: V3.S_DELEGATED_CHILD,
      requestedAt: 1797000000000 + 45 * 1375,
      closed: false,
    },
  ],
  awaitingApproval: true,
  entryCount: 47,
} satisfies SessionState;

const V3_TREE_ROOT = rootState(
  3,
  V3.S_ROOT,
  V3.G_ROOT,
  V3.S_WORKER,
  '{"requests":2,"input_tokens":1860,"output_tokens":42}',
);

const V3_TREE_WORKER = {
  sessionId: V3.S_WORKER,
  segmentId: V3.G_WORKER,
  formatVersion: 3,
  systemPrompt: WORKER_PROMPT,
  config: { max_tokens: 8192 },
  history: [
    text("user", "implement the parser"),
    call("call-worker", "spawn_pod", '{"role":"reviewer","task":"review the parser"}'),
    {
      type: "tool_result",
      call_id: "call-worker",
      summary: `{"id":"${V3.S_REVIEWER}","role":"reviewer","answer":"Looks right; add a test for empty input.","usage":{"requests":1,"input_tokens":700,"output_tokens":18}}`,
    },
    text("assistant", "Parser implemented in src/parse.ts."),
  ],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 900, 0, 880, 30), usage(3, 960, 880, 80, 12)],
  extensions: new Map(),
  lineage: noLineage,
  ...noApprovals,
  parent: { session_id: V3.S_ROOT, call_id: "call-root", role: "worker", depth: 1 },
  entryCount: 10,
} satisfies SessionState;

const V3_TREE_REVIEWER = {
  sessionId: V3.S_REVIEWER,
  segmentId: V3.G_REVIEWER,
  formatVersion: 3,
  systemPrompt: boundaries("REVIEWER: you review, you do not edit.", "/work/app/src"),
  config: { max_tokens: 4096 },
  history: [text("user", "review the parser"), text("assistant", "Looks right; add a test for empty input.")],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 700, 0, 690, 18)],
  extensions: new Map(),
  lineage: noLineage,
  ...noApprovals,
  parent: { session_id: V3.S_WORKER, call_id: "call-worker", role: "reviewer", depth: 2 },
  entryCount: 7,
} satisfies SessionState;

const V3_DISPATCHED = {
  sessionId: V3.S_DISPATCHED,
  segmentId: V3.G_DISPATCHED,
  formatVersion: 3,
  systemPrompt: OPS_PROMPT,
  config: OPS_CONFIG,
  history: [
    text("user", "Rotate the staging keys."),
    call("toolu_11rotate", "bash", '{"command":"./rotate-keys staging"}'),
    { type: "tool_result", call_id: "toolu_11rotate", summary: "rotated 3 keys" },
    text("assistant", "Rotated the three staging keys."),
    text("user", "Review yesterday's commits."),
    text("assistant", "Two commits, both fine."),
  ],
  historySources: [],
  turn: 2,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 1830, 0, 1800, 25), usage(3, 1880, 1830, 50, 11), usage(5, 1930, 1880, 50, 19)],
  // `dispatch.run` registers no fold: its state is the latest run entry.
  extensions: new Map([
    ["dispatch.run", { run_id: V3.RUN_B, event: "ended", state: "completed", result: "finished" }],
  ]),
  lineage: noLineage,
  approvals: [
    {
      callId: "toolu_11rotate",
      tool: "bash",
      arguments: '{"command":"./rotate-keys staging"}',
      podPath: ["root"],
      askedBy: "bash",
      requestedAt: 1797000200000 + 8 * 1375,
      closed: true,
      answer: { decision: "allow", by: "alice@desk", at: 1797000200000 + 10 * 1375 },
    },
  ],
  awaitingApproval: false,
  entryCount: 28,
} satisfies SessionState;

/** A cap stopped the run before its third request: nothing in flight, resumable, not interrupted. */
const V3_BUDGET_STOP = {
  sessionId: V3.S_BUDGET,
  segmentId: V3.G_BUDGET,
  formatVersion: 3,
  systemPrompt: "You explore.",
  config: { max_tokens: 2048 },
  history: [
    text("user", "Look around."),
    call("toolu_21look", "look", "{}"),
    { type: "tool_result", call_id: "toolu_21look", summary: "looked around", content: "x".repeat(64) },
    call("toolu_22look", "look", "{}"),
    { type: "tool_result", call_id: "toolu_22look", summary: "looked around", content: "x".repeat(64) },
  ],
  historySources: [],
  turn: 0,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 420, 0, 0, 12), usage(3, 980, 0, 0, 12)],
  extensions: new Map([["budget", { cap: "run_tokens", limit: 1500, spent: 1424, estimate: 1530 }]]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 11,
} satisfies SessionState;

/**
 * A session a pod started from an explicit manifest with overlays (`podkit run -m … --set …`): the
 * `extension` domain `pod.invocation` right after `segment_start` records them (additive in v3).
 */
const V3_INVOCATION = {
  sessionId: "01a24ac3-c351-748f-9910-20316292f30d",
  segmentId: "01a24ac3-c351-748f-9910-26bb1363e8f0",
  formatVersion: 3,
  systemPrompt:
    "You review code.\n\n## Working boundaries\nNo file system path is in scope for this session: file tools will refuse every path.",
  config: { max_tokens: 8192 },
  history: [text("user", "hi"), text("assistant", "Hello from the fixture.")],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 20, 0, 0, 5)],
  extensions: new Map([
    [
      "pod.invocation",
      {
        manifest: "other/pod.toml",
        set: ["model.base_url=http://127.0.0.1:4010/v1", "worker.system_prompt=You review code."],
      },
    ],
  ]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 8,
} satisfies SessionState;

/**
 * A session of a pod with bash: the `extension` domain `sandbox.probe` right after `segment_start`
 * records what the OS sandbox probe found when the pod started (additive in v3; docs/sandbox.md).
 */
const V3_SANDBOX_PROBE = {
  sessionId: "01a24b02-9ec8-76fb-9a7a-a345f94e83f8",
  segmentId: "01a24b02-9ec8-76fb-9a7a-a48b429dc69d",
  formatVersion: 3,
  systemPrompt:
    "You run commands.\n\n## Working boundaries\nNo file system path is in scope for this session: file tools will refuse every path.",
  config: { max_tokens: 8192 },
  history: [text("user", "hi"), text("assistant", "Ready.")],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 10, 0, 0, 2)],
  extensions: new Map([
    [
      "sandbox.probe",
      { backend: "bwrap", version: "0.8.0", active: true, network: ["registry.npmjs.org"], degraded: [] },
    ],
  ]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 8,
} satisfies SessionState;

/**
 * Decisions (docs/permissions.md): the `extension` domain `policy.decision` (additive in v3) — a
 * rule's deny between the call and its result, and an input guardrail's reject after the run, outside
 * any turn. Without a registered fold the state keeps the latest payload, like any domain.
 */
const V3_DECISIONS = {
  sessionId: "01a24c11-3f0e-7a52-8d1b-6c2f4e9a7b10",
  segmentId: "01a24c11-3f0e-7a52-8d1b-6c30d2e81f44",
  formatVersion: 3,
  systemPrompt: "You run commands.",
  config: { max_tokens: 8192 },
  history: [
    text("user", "clean up"),
    call("toolu_01", "bash", '{"command":"rm README.md"}'),
    {
      type: "tool_result",
      call_id: "toolu_01",
      summary: "tool call denied: nothing is removed",
      is_error: true,
    },
    text("assistant", "I may not remove files."),
  ],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 20, 0, 0, 9), usage(3, 40, 20, 0, 4)],
  extensions: new Map([
    [
      "policy.decision",
      {
        decided_by: "guardrail",
        outcome: "reject",
        pod_path: ["root"],
        rule: "acme-guards/no-keys",
        reason: "the message holds an API key",
        point: "input",
      },
    ],
  ]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 12,
} satisfies SessionState;

/**
 * A typed answer (docs/output.md): an invalid `final_answer` call repaired, a wrapped one accepted,
 * then the `extension` domain `final_output` (additive in v3) with the value, the schema's digest,
 * the normalisation and the repair.
 */
const V3_FINAL_OUTPUT_PAYLOAD = {
  value: { verdict: "approve", findings: [{ line: 3 }] },
  schema_digest: "sha256:6f1ed002ab5595859014ebf0951522d9f3c8d2e6b1a6e27f1e0c3b1b2e8f1a90",
  call_id: "toolu_a2",
  normalizations: ["unwrapped:output"],
  repairs: [
    {
      call_id: "toolu_a1",
      issues: [{ path: "/verdict", message: "must be equal to one of the allowed values" }],
    },
  ],
};
const V3_FINAL_OUTPUT = {
  sessionId: "01a24d20-51aa-7c3e-9f20-1b2c3d4e5f60",
  segmentId: "01a24d20-51aa-7c3e-9f20-1b2c3d4e5f71",
  formatVersion: 3,
  systemPrompt: "You review code.",
  config: { max_tokens: 8192 },
  history: [
    text("user", "review the patch"),
    call("toolu_a1", "final_answer", '{"verdict":"maybe","findings":[]}'),
    {
      type: "tool_result",
      call_id: "toolu_a1",
      summary:
        "The answer does not match the required schema:\n- /verdict: must be equal to one of the allowed values\nCall final_answer again with the whole corrected answer (correction 1 of at most 2).",
      is_error: true,
    },
    call("toolu_a2", "final_answer", '{"output":{"verdict":"approve","findings":[{"line":3}]}}'),
    { type: "tool_result", call_id: "toolu_a2", summary: "Answer received." },
  ],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 120, 0, 0, 30), usage(3, 180, 120, 0, 28)],
  extensions: new Map([["final_output", V3_FINAL_OUTPUT_PAYLOAD]]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 12,
} satisfies SessionState;

/**
 * File changes (docs/rewind.md): the `extension` domain `files.changed` (additive in v3) between a
 * call and its result — an `edit_file` in turn 1; a `bash` command that rewrote, created and
 * deleted a file in turn 2, each content named by the digest of its blob (null: no file). Without
 * a registered fold the state keeps the latest payload, like any domain.
 */
const V3_FILES_CHANGED_PAYLOAD = {
  call_id: "toolu_f2",
  tool: "bash",
  changes: [
    {
      path: "notes/colour.md",
      before: "sha256:aca5eda2ab5df6999a305dcb799f711e9a26f3f906a6bed098c5dcd5481798d1",
      after: "sha256:eaf6c107965c25668ce47611c7aca5f4e53285d634c37dea7a857c9388ce92d0",
    },
    {
      path: "notes/new.md",
      before: null,
      after: "sha256:7eb2ca55b87a4d45d66a63f76db11f9b4aa9106472a62b5865060f9fd8eadaaa",
    },
    {
      path: "notes/old.md",
      before: "sha256:abdcccf4a6a5fae3da2c8232d6fbf33b61d5db886742c35218e724b8e5c6b0e0",
      after: null,
    },
  ],
};
const V3_FILES_CHANGED = {
  sessionId: "01a25e30-7c41-7d2a-9b3e-2f4a6c8d0e11",
  segmentId: "01a25e30-7c41-7d2a-9b3e-2f51b7c9e3a4",
  formatVersion: 3,
  systemPrompt: "You edit a small project.",
  config: { max_tokens: 8192 },
  history: [
    text("user", "make the answer 42"),
    call("toolu_f1", "edit_file", '{"path":"src/answer.ts","old_string":"= 41","new_string":"= 42"}'),
    { type: "tool_result", call_id: "toolu_f1", summary: "replaced 1 occurrence in src/answer.ts (line 1)" },
    text("assistant", "Done."),
    text("user", "tidy the notes"),
    call(
      "toolu_f2",
      "bash",
      `{"command":"echo draft > notes/new.md && rm notes/old.md && sed -i 's/red/blue/' notes/colour.md"}`,
    ),
    { type: "tool_result", call_id: "toolu_f2", summary: "exit code 0", content: "" },
    text("assistant", "Tidied."),
  ],
  historySources: [],
  turn: 2,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 30, 0, 0, 24), usage(3, 60, 30, 0, 3), usage(5, 80, 60, 0, 40), usage(7, 100, 80, 0, 3)],
  extensions: new Map([["files.changed", V3_FILES_CHANGED_PAYLOAD]]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 21,
} satisfies SessionState;

/**
 * An eval item (docs/evals.md): a session of its own whose first entry after `segment_start` is
 * the `extension` domain `eval.origin` (additive in v3: source session, turn range, variant, eval
 * id), then the replayed turn, then one `eval.score` entry per scorer. Without a registered fold
 * the state keeps each domain's latest payload, like any domain.
 */
const V3_EVAL_ITEM = {
  sessionId: "01a25f40-2b6c-7e1d-8a4f-3c5e7a9b1d20",
  segmentId: "01a25f40-2b6c-7e1d-8a4f-3c5e7a9b1d31",
  formatVersion: 3,
  systemPrompt: "You answer from the readme.",
  config: { max_tokens: 8192 },
  history: [
    text("user", "what does the readme say?"),
    call("toolu_e1", "read_file", '{"path":"README.md"}'),
    {
      type: "tool_result",
      call_id: "toolu_e1",
      summary: "README.md: lines 1-1 of 1",
      content: "     1\treadme",
    },
    text("assistant", "It says readme."),
  ],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 100, 0, 0, 12), usage(3, 140, 60, 0, 12)],
  extensions: new Map<string, unknown>([
    [
      "eval.origin",
      {
        source_session: "01a25e30-7c41-7d2a-9b3e-2f4a6c8d0e11",
        from_turn: 1,
        to_turn: 1,
        variant: {
          manifest: "variant.toml",
          model: "anthropic/claude-sonnet-4-5",
          pack: "packs/terse.toml",
          set: ["worker.max_turns=5"],
        },
        eval_id: "nightly-7",
      },
    ],
    [
      "eval.score",
      {
        name: "trajectory",
        score: 0.5,
        pass: false,
        detail: "called [read_file], recorded [read_file, grep]",
        baseline_score: 1,
        eval_id: "nightly-7",
      },
    ],
  ]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 13,
} satisfies SessionState;

/**
 * Media in tool results (docs/media.md): `tool_result` items whose `media` name blobs by digest —
 * never the bytes — a downscaled screenshot (`scaled_from`) and a PDF in turn 1; in turn 2 an MCP
 * server's image, and the `system_item{kind: attachment}` carrying it after the results (a wire
 * whose tool results take no media), with the same `media`. Both fields are additive in v3: a
 * reader without them keeps them verbatim; replay gives the attachment's message its `media`.
 */
const MEDIA_SHOT = {
  type: "media",
  media_type: "image/png",
  digest: "sha256:3f1c9a7e25b84d06c1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4",
  bytes: 412877,
  width: 1568,
  height: 980,
  scaled_from: { width: 3136, height: 1960 },
};
const MEDIA_SPEC = {
  type: "media",
  media_type: "application/pdf",
  digest: "sha256:a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b",
  bytes: 48211,
  name: "spec.pdf",
};
const MEDIA_LOGO = {
  type: "media",
  media_type: "image/png",
  digest: "sha256:5d41402abc4b2a76b9719d911017c592ae2f1c0d8e4b1a6f3c9d7e5b2a4f6c8d",
  bytes: 1237,
  width: 20,
  height: 20,
};
const MEDIA_ATTACHMENT = {
  kind: "attachment" as const,
  body: "[The file returned by the tool calls above: image/png 20×20]",
  media: [MEDIA_LOGO],
};
const V3_MEDIA = {
  sessionId: "01a26a10-4d2e-7c3b-8e5f-1a2b3c4d5e60",
  segmentId: "01a26a10-4d2e-7c3b-8e5f-1a2b3c4d5e71",
  formatVersion: 3,
  systemPrompt: "You look at screens.",
  config: { max_tokens: 8192 },
  history: [
    text("user", "what does the login page look like?"),
    call("toolu_m1", "read_file", '{"path":"shots/login.png"}'),
    call("toolu_m2", "read_file", '{"path":"docs/spec.pdf"}'),
    {
      type: "tool_result",
      call_id: "toolu_m1",
      summary: "shots/login.png: image/png 3136×1960, 2.9 MB (attached)",
      media: [MEDIA_SHOT],
    },
    {
      type: "tool_result",
      call_id: "toolu_m2",
      summary: "docs/spec.pdf: application/pdf, 47 KB (attached)",
      media: [MEDIA_SPEC],
    },
    text("assistant", "A login form, as the spec describes."),
    text("user", "and the server's logo?"),
    call("call_m3", "mcp__everything__get-tiny-image", "{}"),
    {
      type: "tool_result",
      call_id: "call_m3",
      summary: "mcp__everything__get-tiny-image returned 3 content blocks (96 bytes)",
      content:
        "Here's the image you requested:\n[image: image/png, 1237 bytes; attached]\nThe image above is the MCP logo.",
      media: [MEDIA_LOGO],
    },
    { ...text("system", MEDIA_ATTACHMENT.body), media: [MEDIA_LOGO] },
    text("assistant", "A small MCP logo."),
  ],
  historySources: [{ index: 9, from: "system_item", item: MEDIA_ATTACHMENT }],
  turn: 2,
  interrupted: false,
  inFlight: null,
  usage: [
    usage(1, 40, 0, 0, 30),
    usage(5, 2900, 40, 0, 12),
    usage(7, 2960, 2900, 0, 20),
    usage(10, 3100, 2960, 0, 9),
  ],
  extensions: new Map(),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 22,
} satisfies SessionState;

const SKILL_DIGEST = "sha256:fff55f96de0455381bec3bcfcc900d98b7b122538dac212722d35dfb6d7c37ce";
const SKILL_ACTIVE = [
  { name: "pdf", digest: SKILL_DIGEST, allowed_tools: ["Bash(python3 scripts/fill.py:*)"], writable: false },
];

/**
 * Skills (docs/skills.md): the `extension` domains `skills.known` (the listing's mode and the skills'
 * digests at session start) and `skills.loaded` (each `skill` call that loaded a body or a bundled
 * file, with the SKILL.md's digest, before the call's result), both additive in v3. The body is the
 * result's summary, so prune never drops it. Without a registered fold the state keeps each domain's
 * latest payload.
 */
const V3_SKILLS = {
  sessionId: "01a26a10-5b2c-7e4f-9a1d-3c5e7f9a1b20",
  segmentId: "01a26a10-5b2c-7e4f-9a1d-3c61a2b4c6d8",
  formatVersion: 3,
  systemPrompt:
    "You fill forms.\n\n## Skills\nSkills are instructions for particular kinds of task, kept out of this prompt until they are needed. When a task matches a skill's description, load the skill with the skill tool (by its name) before you start, and follow it. The skills:\n- pdf: Fill PDF forms.",
  config: { max_tokens: 8192 },
  history: [
    text("user", "fill the form"),
    call("toolu_s1", "skill", '{"name":"pdf"}'),
    {
      type: "tool_result",
      call_id: "toolu_s1",
      summary:
        "[Skill pdf, from .podkit/skills/pdf]\n\nRun scripts/fill.py with the form's path.\n\nFiles bundled with pdf (read one with the skill tool, name \"pdf\" and the file's path as shown; run scripts with bash, as .podkit/skills/pdf/<path>):\n- reference.md\n- scripts/fill.py",
    },
    call("toolu_s2", "skill", '{"name":"pdf","file":"reference.md"}'),
    {
      type: "tool_result",
      call_id: "toolu_s2",
      summary: "pdf/reference.md (24 bytes)",
      content: "field names: name, date\n",
    },
    text("assistant", "Filled."),
  ],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 120, 0, 0, 12), usage(3, 210, 120, 0, 18), usage(5, 240, 210, 0, 4)],
  extensions: new Map<string, unknown>([
    ["skills.known", { mode: "list", skills: [{ name: "pdf", digest: SKILL_DIGEST }] }],
    [
      "skills.loaded",
      {
        call_id: "toolu_s2",
        name: "pdf",
        digest: SKILL_DIGEST,
        path: ".podkit/skills/pdf/SKILL.md",
        file: "reference.md",
        file_digest: "sha256:e08087a5f32c36a3ae5a4171b479a9b199e49e50675f04f53d2f6187c7a1aa12",
        active: SKILL_ACTIVE,
      },
    ],
  ]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 16,
} satisfies SessionState;

/**
 * A session of a pod with `[[mcp.server]]` entries: the `extension` domain `mcp.tools` right after
 * `segment_start` records each server's tools as the model saw them (additive in v3; an eval replays
 * the servers from it without starting them, docs/evals.md). A server that did not start lists none.
 */
const V3_MCP_TOOLS = {
  sessionId: "01a26000-4d2e-7a1b-8c3d-5e6f7a8b9d01",
  segmentId: "01a26000-4d2e-7a1b-8c3d-5e6f7a8b9d12",
  formatVersion: 3,
  systemPrompt: "You look things up in the issue tracker.",
  config: { max_tokens: 4096 },
  history: [
    text("user", "what is issue 7 about?"),
    call("call_get", "mcp__tracker__get_issue", '{"id":"7"}'),
    { type: "tool_result", call_id: "call_get", summary: "issue 7: the export button does nothing" },
    text("assistant", "The export button does nothing."),
  ],
  historySources: [],
  turn: 1,
  interrupted: false,
  inFlight: null,
  usage: [usage(1, 700, 0, 0, 12), usage(3, 760, 700, 0, 9)],
  extensions: new Map([
    [
      "mcp.tools",
      {
        servers: [
          {
            name: "tracker",
            tools: [
              {
                name: "mcp__tracker__get_issue",
                description: "Get one issue from the issue tracker by its identifier.",
                input_schema: {
                  type: "object",
                  properties: { id: { type: "string", description: "the identifier" } },
                  required: ["id"],
                },
                read_only: true,
              },
              {
                name: "mcp__tracker__create_issue",
                description: "Create a new issue in the issue tracker.",
                input_schema: {
                  type: "object",
                  properties: { title: { type: "string" } },
                  required: ["title"],
                },
              },
            ],
          },
          { name: "offline", tools: [] },
        ],
      },
    ],
  ]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 11,
} satisfies SessionState;

/**
 * Deferred tools (docs/tools-deferred.md): the `extension` domain `mcp.tools_changed` (additive in
 * v3) records an MCP server's changed tool list — names added, removed and changed, and whether the
 * change reached the model (`applied`: through find_tools/call_tool) — right before the
 * notification that tells the model. The found definitions come back in find_tools' result; the
 * deferred tool is called through call_tool. Without a registered fold the state keeps the latest
 * payload, like any domain.
 */
const V3_TOOLS_CHANGED_NOTE =
  '[Notification]\nThe MCP server "big" changed its tools; added: mcp__big__added_tool_1; changed: mcp__big__create_invoice. Use find_tools to read their current definitions before calling them with call_tool.';
const V3_MCP_TOOLS_CHANGED = {
  sessionId: "01a26000-4d2e-7a1b-8c3d-5e6f7a8b9c01",
  segmentId: "01a26000-4d2e-7a1b-8c3d-5e6f7a8b9c12",
  formatVersion: 3,
  systemPrompt: "You run errands across many tools.",
  config: { max_tokens: 8192 },
  history: [
    text("user", "hello"),
    text("assistant", "ready"),
    text("user", "send the weekly digest"),
    text("system", V3_TOOLS_CHANGED_NOTE),
    call("call_find", "find_tools", '{"query":"weekly digest of team activity"}'),
    {
      type: "tool_result",
      call_id: "call_find",
      summary:
        '1 of 31 deferred tools match "weekly digest of team activity": mcp__big__added_tool_1. Call one with call_tool and arguments that match its input_schema.',
      content: JSON.stringify(
        [
          {
            name: "mcp__big__added_tool_1",
            description: "Summarize a week of team activity into a digest (added while running, change 1).",
            input_schema: { type: "object", properties: { week: { type: "string" } }, required: ["week"] },
          },
        ],
        null,
        1,
      ),
    },
    call("call_new", "call_tool", '{"name":"mcp__big__added_tool_1","arguments":{"week":"2026-W31"}}'),
    { type: "tool_result", call_id: "call_new", summary: 'added_tool_1: done {"week":"2026-W31"}' },
    text("assistant", "digest sent"),
  ],
  historySources: [
    { index: 3, from: "system_item", item: { kind: "notification", body: V3_TOOLS_CHANGED_NOTE } },
  ],
  turn: 2,
  interrupted: false,
  inFlight: null,
  usage: [
    usage(1, 900, 0, 0, 3),
    usage(4, 1000, 900, 0, 20),
    usage(6, 1150, 1000, 0, 30),
    usage(8, 1200, 1150, 0, 4),
  ],
  extensions: new Map([
    [
      "mcp.tools_changed",
      {
        server: "big",
        added: ["mcp__big__added_tool_1"],
        removed: [],
        changed: ["mcp__big__create_invoice"],
        applied: true,
      },
    ],
  ]),
  lineage: noLineage,
  ...noApprovals,
  entryCount: 21,
} satisfies SessionState;

/** The exact state of each fixture segment (`SessionLog.openSegment`, no extension folds). */
export const EXPECTED_STATES: Readonly<Record<string, SessionState>> = {
  ...Object.fromEntries(Object.entries(V1_STATES).map(([file, state]) => [`v1/${file}`, state])),
  // The v1 logs re-framed in v2 restore to exactly their v1 state.
  ...Object.fromEntries(
    Object.entries(V1_STATES).map(([file, state]) => [`v2/${file}`, { ...state, formatVersion: 2 }]),
  ),
  "v2/annotated-source.jsonl": V2_ANNOTATED_SOURCE,
  "v2/annotated-fork.jsonl": V2_ANNOTATED_FORK,
  "v2/approvals.jsonl": V2_APPROVALS,
  "v2/subpod-parent.jsonl": V2_SUBPOD_PARENT,
  "v2/subpod-child.jsonl": V2_SUBPOD_CHILD,
  "v3/approvals.jsonl": V3_APPROVALS,
  "v3/tree-root.jsonl": V3_TREE_ROOT,
  "v3/tree-worker.jsonl": V3_TREE_WORKER,
  "v3/tree-reviewer.jsonl": V3_TREE_REVIEWER,
  "v3/dispatched.jsonl": V3_DISPATCHED,
  "v3/budget-stop.jsonl": V3_BUDGET_STOP,
  "v3/invocation.jsonl": V3_INVOCATION,
  "v3/sandbox-probe.jsonl": V3_SANDBOX_PROBE,
  "v3/decisions.jsonl": V3_DECISIONS,
  "v3/final-output.jsonl": V3_FINAL_OUTPUT,
  "v3/files-changed.jsonl": V3_FILES_CHANGED,
  "v3/mcp-tools-changed.jsonl": V3_MCP_TOOLS_CHANGED,
  "v3/mcp-tools.jsonl": V3_MCP_TOOLS,
  "v3/eval-item.jsonl": V3_EVAL_ITEM,
  "v3/skills.jsonl": V3_SKILLS,
  "v3/media.jsonl": V3_MEDIA,
};

export { V1_COMPACTED, V1_COMPACTED_SOURCE, V1_FORKED, V1_INTERRUPTED, V1_PLAIN, V1_TOOLS };
