import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBin } from "./run-bin.js";
import { doubleWorkspace, everyInvokeClosed, sessionEntries } from "./support/workspace.js";

// The commands end to end, in child processes, against the provider double on the Anthropic wire.

let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  ws = await doubleWorkspace(double.baseUrl);
});
afterEach(async () => {
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

const env = () => ({ HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
const podkit = (args: string[], input?: string) =>
  runBin(args, { cwd: ws.workspace, env: env(), ...(input === undefined ? {} : { input }) });
const sessionOf = (stderr: string) => /podkit resume (\S+)/.exec(stderr)?.[1] as string;

describe("podkit init", () => {
  it("writes a commented .podkit/manifest.toml that loads, and refuses to overwrite it", async () => {
    const dir = join(ws.root, "fresh-project");
    await mkdir(dir);
    const first = await runBin(["init", "--model", "openai/gpt-5"], { cwd: dir, env: env() });
    expect(first.code).toBe(0);
    const text = await readFile(join(dir, ".podkit", "manifest.toml"), "utf8");
    expect(text).toMatch(/^# podkit manifest/);
    expect(text).toContain('name = "fresh-project"');
    const shown = await runBin(["manifest", "show", "--json"], { cwd: dir, env: env() });
    expect(JSON.parse(shown.stdout).manifest.model.ref).toBe("openai/gpt-5");
    const again = await runBin(["init"], { cwd: dir, env: env() });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^error: .*manifest\.toml already exists; podkit init never overwrites a manifest\nhint: /,
    );
    expect(await readFile(join(dir, ".podkit", "manifest.toml"), "utf8")).toBe(text);
  });
});

describe("podkit prompt render", () => {
  it("prints the materialized prompt with AGENTS.md and a workspace prompt file, without a key, a model call or a session", async () => {
    await writeFile(join(ws.workspace, "AGENTS.md"), "Always cite ticket ids.\n");
    await mkdir(join(ws.workspace, ".podkit", "prompts"));
    await writeFile(
      join(ws.workspace, ".podkit", "prompts", "style.md"),
      "Write like {{ language }} newspapers.",
    );
    const result = await runBin(
      [
        "prompt",
        "render",
        "--set",
        'worker.system_prompt="{% include \\"$workspace/style\\" %} Tools: {{ tools | join(\\", \\") }}"',
      ],
      { cwd: ws.workspace, env: { HOME: ws.home } },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^Write like .* newspapers\. Tools: bash, edit_file, glob, grep, read_file, write_file/,
    );
    expect(result.stdout).toContain("Always cite ticket ids.");
    expect(double.requests).toHaveLength(0);
    expect(existsSync(join(ws.workspace, ".podkit", "sessions"))).toBe(false);
  });
});

describe("podkit run without a terminal", () => {
  it("leaves bash pending: exit code 4, the approve command printed, nothing ran, the model asked once", async () => {
    double.enqueue({
      parts: [{ type: "tool_call", name: "bash", arguments: { command: "touch made-by-bash" } }],
    });
    const result = await podkit(["run", "make the file"]);
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toContain("the run is awaiting approval of 1 tool call(s)");
    expect(result.stderr).toMatch(/answer: podkit approve \S+ \S+ --allow/);
    expect(result.stderr).toContain("bash(touch made-by-bash)");
    expect(existsSync(join(ws.workspace, "made-by-bash"))).toBe(false);
    expect(double.requests).toHaveLength(1);
    // No control codes in piped output.
    expect(result.stdout + result.stderr).not.toContain("\u001b[");
  });

  it("--yes runs bash; --json prints one JSON object per event and the session last", async () => {
    double.enqueue(
      {
        parts: [
          { type: "reasoning", text: "Making the file.", signature: "s" },
          { type: "tool_call", name: "bash", arguments: { command: "touch made-by-bash" } },
        ],
      },
      { parts: [{ type: "text", text: "Done." }] },
    );
    const result = await podkit(["run", "make the file", "--yes", "--json"]);
    expect(result.code).toBe(0);
    expect(existsSync(join(ws.workspace, "made-by-bash"))).toBe(true);
    const events = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        "turn_start",
        "reasoning_delta",
        "tool_call_start",
        "tool_call_end",
        "text_delta",
        "turn_end",
        "run_end",
      ]),
    );
    const last = events.at(-1) as { type: string; sessionId: string };
    expect(last.type).toBe("session");
    expect(everyInvokeClosed(await sessionEntries(ws.workspace, last.sessionId))).toBe(true);
  });

  it("--hide-reasoning leaves the reasoning out; by default it is shown (plain, marked)", async () => {
    const script = () =>
      double.enqueue({
        parts: [
          { type: "reasoning", text: "secret musing", signature: "s" },
          { type: "text", text: "Answer." },
        ],
      });
    script();
    const shown = await podkit(["run", "q"]);
    expect(shown.stdout).toBe("(reasoning) secret musing\nAnswer.\n");
    script();
    const hidden = await podkit(["run", "q", "--hide-reasoning"]);
    expect(hidden.stdout).toBe("Answer.\n");
  });

  it("reads one turn per line from piped input and ends the session at the end of input", async () => {
    double.enqueue({ parts: [{ type: "text", text: "One." }] }, { parts: [{ type: "text", text: "Two." }] });
    const result = await podkit(["run"], "first\n\nsecond\n");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("One.\nTwo.\n");
    const entries = await sessionEntries(ws.workspace, sessionOf(result.stderr));
    expect(entries.filter((e) => e.kind === "user_input").map((e) => e.text)).toEqual(["first", "second"]);
  });
});

describe("podkit compact", () => {
  it("compacts a session into a new segment with start and done lines, and resume continues there", async () => {
    double.enqueue(
      { parts: [{ type: "text", text: `First answer. ${"detail ".repeat(400)}` }] },
      { parts: [{ type: "text", text: `Second answer. ${"detail ".repeat(400)}` }] },
    );
    const first = await podkit(["run"], "one\ntwo\n");
    const sessionId = sessionOf(first.stderr);
    double.enqueue(
      {
        parts: [
          { type: "tool_call", name: "write_summary", arguments: { summary: "The user asked two things." } },
        ],
      },
      { parts: [{ type: "text", text: "Summary written." }] },
    );
    const compacted = await podkit(["compact", sessionId, "--set", "compaction.retained_tokens=100"]);
    expect(compacted.stderr).toBe("");
    expect(compacted.code).toBe(0);
    expect(compacted.stdout).toMatch(
      /^compacting the context \(manual\)…\ncompacting the context \(manual\): \d+ → \d+ tokens, new segment (\S+) \(\d+\.\ds\)\n/,
    );
    const segment = /new segment (\S+) /.exec(compacted.stdout)?.[1] as string;
    expect(compacted.stdout).toContain(`continues in segment ${segment}`);
    expect((await readdir(join(ws.workspace, ".podkit", "sessions", sessionId))).sort()).toHaveLength(2);
    double.enqueue({ parts: [{ type: "text", text: "After compaction." }] });
    const resumed = await podkit(["resume", sessionId, "three"]);
    expect(resumed.stdout).toBe("After compaction.\n");
    expect(JSON.stringify(double.requests.at(-1)?.body.messages)).toContain("The user asked two things.");
  });
});

describe("podkit memory", () => {
  it("extract stages a session, consolidate writes linted records, lint and query read them", async () => {
    // The session is made before `[memory]` is on: with it, `podkit run` would extract the tail
    // itself when the pod closes, and `memory extract` would find nothing new.
    double.enqueue({ parts: [{ type: "text", text: "We will keep ids stable." }] });
    const sessionId = sessionOf((await podkit(["run", "never renumber tickets"])).stderr);
    await writeFile(
      join(ws.workspace, ".podkit", "manifest.toml"),
      `${await readFile(join(ws.workspace, ".podkit", "manifest.toml"), "utf8")}\n[memory]\nextract_threshold = 100000\n`,
    );
    double.enqueue(
      {
        parts: [
          {
            type: "tool_call",
            name: "write_extracted",
            arguments: {
              decisions: [],
              discussions: [],
              attempts: [],
              requests: [{ topic: "ticket ids", request: "never renumber tickets" }],
            },
          },
        ],
      },
      { parts: [{ type: "text", text: "Recorded." }] },
    );
    const extracted = await podkit(["memory", "extract", sessionId]);
    expect(extracted.code).toBe(0);
    expect(extracted.stdout).toMatch(/^staged /);
    expect(extracted.stderr).toMatch(/^extracting memory…\nextracting memory: extracted \(\d+\.\ds\)\n/);
    double.enqueue(
      {
        parts: [
          {
            type: "tool_call",
            name: "memory_write",
            arguments: {
              kind: "request",
              slug: "stable-ticket-ids",
              content:
                "---\ncreated_at: 2026-01-01T00:00:00Z\nupdated_at: 2026-01-01T00:00:00Z\nsources: []\n---\n\nNever renumber tickets.\n",
              reason: "the user asked for it",
              staged: ["s1-r1"],
            },
          },
        ],
      },
      { parts: [{ type: "text", text: "Done." }] },
      { parts: [{ type: "text", text: "Nothing to tidy." }] },
    );
    const consolidated = await podkit(["memory", "consolidate"]);
    expect(consolidated.code).toBe(0);
    expect(consolidated.stdout).toBe("create request/stable-ticket-ids: the user asked for it\n");
    expect(consolidated.stderr).toMatch(/consolidating memory: 1 change\(s\) from 1 staging file\(s\)/);
    expect((await podkit(["memory", "lint"])).stdout).toBe("memory records: no problems\n");
    const query = await podkit(["memory", "query", "renumber"]);
    expect(query.stdout).toContain("request/stable-ticket-ids");
    await writeFile(join(ws.workspace, ".podkit", "memory", "requests", "Bad Slug.md"), "no frontmatter\n");
    const lint = await podkit(["memory", "lint"]);
    expect(lint.code).toBe(1);
    expect(lint.stdout).toMatch(/^error: /m);
  });
});
