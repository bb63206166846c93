import { appendFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { loadManifest } from "@podkit/manifest";
import { EVAL_ORIGIN_DOMAIN, EVAL_SCORE_DOMAIN, runEval } from "@podkit/pod";
import { SessionLog, sessionsRoot } from "@podkit/session-store";
import { startProviderDouble } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { answerDiff } from "../src/eval-compare/answer-diff.js";
import { type ComparedCall, toolCallDiff } from "../src/eval-compare/tool-call-diff.js";
import { type ServeWorld, useServeWorlds } from "./support/serve-world.js";
import { http } from "./support/sse-client.js";

// GET /sessions/:id/eval-compare: an eval item (a session `runEval` wrote) beside the session it
// replayed, over real HTTP — a recording made through the server against the provider double,
// replayed by `runEval` against another double that answers differently.

const world = useServeWorlds();
const READ_WORKSPACE = '[[scope.allow]]\ntarget = ".."\npermission = "read"';
const QUESTION = "what does the readme say?";

/** Records one turn through the server (read_file, then an answer) and replays it with other calls and another answer. */
async function recordAndReplay(w: ServeWorld) {
  await writeFile(join(w.workspace, "README.md"), "hello\n");
  w.double.enqueue(
    { parts: [{ type: "tool_call", name: "read_file", arguments: { path: "README.md" } }] },
    { parts: [{ type: "text", text: "It says hello, nothing more." }] },
  );
  const started = await http(w.url("/sessions"), { json: { message: QUESTION, wait: true } });
  expect(started.status, started.text).toBe(200);
  const source = (started.body as { sessionId: string }).sessionId;
  const variant = await startProviderDouble({ wire: "anthropic" });
  try {
    variant.enqueue(
      {
        parts: [
          { type: "tool_call", name: "read_file", arguments: { path: "./README.md" } },
          { type: "tool_call", name: "grep", arguments: { pattern: "hello" } },
        ],
      },
      { parts: [{ type: "text", text: "It says hello." }] },
    );
    const manifest = await loadManifest({ env: { cwd: w.workspace, home: join(w.root, "home"), env: {} } });
    const report = await runEval({
      cases: [{ sessionId: source }],
      store: w.store,
      variant: { manifest, model: variant.baseUrl },
      podOptions: { env: { ANTHROPIC_API_KEY: "test-key" }, onWarning: () => {} },
      evalId: "compare-check",
    });
    return { source, item: report.items[0]?.sessionId as string };
  } finally {
    await variant.close();
  }
}

/** A session whose log says it is an eval item with `origin` (written by hand: untrusted input). */
async function handWrittenItem(w: ServeWorld, origin: unknown): Promise<string> {
  const log = await SessionLog.create<Item>(w.store, { systemPrompt: "S", config: {}, history: [] });
  await log.append({ kind: "extension", domain: EVAL_ORIGIN_DOMAIN, payload: origin });
  await log.append({
    kind: "extension",
    domain: EVAL_SCORE_DOMAIN,
    payload: { name: "answer", score: 0, pass: false, baseline_score: 1, eval_id: "x" },
  });
  return log.sessionId;
}

const origin = (source: unknown) => ({
  source_session: source,
  from_turn: 1,
  to_turn: 1,
  // An own key `__proto__`, as a parsed log line can hold.
  variant: JSON.parse('{"model": "anthropic/claude-sonnet-4-5", "__proto__": {"polluted": true}}'),
  eval_id: "by-hand",
});

describe("GET /sessions/:id/eval-compare", () => {
  it("shows an eval item beside its original: turns side by side, the answers' word diff, the tool calls matched, the scores", async () => {
    const w = await world({ manifestExtra: READ_WORKSPACE });
    const { source, item } = await recordAndReplay(w);
    const response = await http(w.url(`/sessions/${item}/eval-compare`));
    expect(response.status, response.text).toBe(200);
    const body = response.body as {
      origin: Record<string, unknown>;
      source: { sessionId: string; problem: string | null };
      turns: {
        original: { answer: string; input: string };
        item: { answer: string };
        answerDiff: { op: string; text: string }[];
        toolCalls: Record<string, unknown>[];
      }[];
      scores: { name: string; pass: boolean; baselineScore: number | null }[];
    };
    expect(body.origin).toMatchObject({
      evalId: "compare-check",
      sourceSession: source,
      fromTurn: 1,
      toTurn: 1,
    });
    expect(body.source).toEqual({ sessionId: source, problem: null });
    expect(body.turns).toHaveLength(1);
    const [turn] = body.turns;
    expect(turn?.original).toMatchObject({ input: QUESTION, answer: "It says hello, nothing more." });
    expect(turn?.item).toMatchObject({ answer: "It says hello." });
    // The diff rebuilds each answer, and marks what only one of them has.
    const side = (op: string) =>
      turn?.answerDiff
        .filter((p) => p.op === "same" || p.op === op)
        .map((p) => p.text)
        .join("");
    expect(side("removed")).toBe("It says hello, nothing more.");
    expect(side("added")).toBe("It says hello.");
    expect(
      turn?.answerDiff
        .filter((p) => p.op === "removed")
        .map((p) => p.text)
        .join(""),
    ).toContain("nothing more");
    expect(turn?.toolCalls).toMatchObject([
      {
        change: "changed",
        name: "read_file",
        original: { arguments: '{"path":"README.md"}', isError: false },
        // The call was never recorded: the replay answered it with an error (a divergence).
        item: { arguments: '{"path":"./README.md"}', isError: true },
      },
      { change: "added", name: "grep", item: { arguments: '{"pattern":"hello"}' } },
    ]);
    expect(body.scores.map((s) => [s.name, s.pass, s.baselineScore])).toEqual([
      ["answer", false, 1],
      // The item called grep, which the recording did not.
      ["trajectory", false, 1],
    ]);
  });

  it("answers 404 for a session that is not an eval item, and for one that does not exist", async () => {
    const w = await world();
    w.double.enqueue({ parts: [{ type: "text", text: "hi" }] });
    const started = await http(w.url("/sessions"), { json: { message: "hello", wait: true } });
    const { sessionId } = started.body as { sessionId: string };
    const plain = await http(w.url(`/sessions/${sessionId}/eval-compare`));
    expect(plain.status).toBe(404);
    expect(plain.body).toMatchObject({
      error: `session ${sessionId} is not an eval item: its log has no eval.origin entry`,
    });
    const missing = await http(w.url("/sessions/01900000-0000-7000-8000-000000000000/eval-compare"));
    expect(missing.status).toBe(404);
    expect((await http(w.url("/sessions/..%2Fetc/eval-compare"))).status).toBe(400);
  });

  it("answers 422 for an eval.origin entry of the wrong shape", async () => {
    const w = await world();
    const item = await handWrittenItem(w, { source_session: 42, eval_id: ["no"] });
    const response = await http(w.url(`/sessions/${item}/eval-compare`));
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ error: expect.stringContaining("eval.origin entry is malformed") });
  });

  it("shows the item with a clear message, never a 500, when its source id is not an id, not in the store, or unreadable", async () => {
    const w = await world({ manifestExtra: READ_WORKSPACE });
    const problemOf = async (sessionId: string) => {
      const response = await http(w.url(`/sessions/${sessionId}/eval-compare`));
      expect(response.status, response.text).toBe(200);
      const body = response.body as {
        source: { sessionId: string | null; problem: string };
        origin: { variant: Record<string, string> };
        scores: unknown[];
      };
      // The item's own side is still there.
      expect(body.scores.length).toBeGreaterThan(0);
      return body;
    };

    const traversal = await problemOf(await handWrittenItem(w, origin("../../../etc/passwd")));
    expect(traversal.source).toEqual({
      sessionId: null,
      problem: expect.stringContaining("not a session id"),
    });
    // A variant key that is special in JavaScript changes nothing: it is left out.
    expect(traversal.origin.variant).toEqual({ model: "anthropic/claude-sonnet-4-5" });

    const gone = "01900000-0000-7000-8000-00000000dead";
    expect((await problemOf(await handWrittenItem(w, origin(gone)))).source.problem).toContain(
      `The original session ${gone} is not in this server's store`,
    );

    const { source, item } = await recordAndReplay(w);
    const dir = join(sessionsRoot(w.workspace), source);
    const [segment] = (await readdir(dir)).filter((name) => name.endsWith(".jsonl"));
    await appendFile(join(dir, segment as string), "{ this line is not JSON }\n");
    const corrupt = await problemOf(item);
    expect(corrupt.source.problem).toMatch(
      new RegExp(`^The original session ${source} cannot be read: line \\d+ is corrupt`),
    );

    const inputs = await problemOf(
      await handWrittenItem(w, { ...origin(null), from_turn: null, to_turn: null }),
    );
    expect(inputs.source.problem).toContain("not a recorded session");
  });
});

describe("the diffs of the comparison", () => {
  const call = (name: string, args: string): ComparedCall => ({
    name,
    arguments: args,
    result: null,
    isError: false,
  });

  it("matches tool calls by name and arguments: same, changed arguments, only in the original, only in the item", () => {
    const original = [
      call("read_file", '{"path":"a"}'),
      call("lookup", '{"key":1}'),
      call("grep", '{"p":"x"}'),
    ];
    const item = [call("read_file", '{"path":"a"}'), call("grep", '{"p":"y"}'), call("write_file", "{}")];
    expect(toolCallDiff(original, item).map((c) => [c.change, c.name])).toEqual([
      ["same", "read_file"],
      ["removed", "lookup"],
      ["changed", "grep"],
      ["added", "write_file"],
    ]);
    expect(toolCallDiff([], [])).toEqual([]);
  });

  it("diffs answers by word, also where words are not separated by spaces", async () => {
    const parts = await answerDiff("答えは42です。", "答えは7です。");
    expect(parts.filter((p) => p.op !== "same").map((p) => [p.op, p.text])).toEqual([
      ["removed", "42"],
      ["added", "7"],
    ]);
    expect(await answerDiff("same", "same")).toEqual([{ op: "same", text: "same" }]);
  });
});
