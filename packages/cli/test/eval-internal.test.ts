import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type CapturedRequest,
  type ProviderDouble,
  type ScriptedResponse,
  startProviderDouble,
} from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit eval --internal memory_extract` (docs/evals.md, "Internal prompts"): memory's real
// extract runs on a copy of a session recorded with `podkit run`, with the variant's
// `memory_extract_system`, against a stand-in model on the provider double; what it extracted is
// scored with the checklist. (The compaction side runs in eval-acceptance.test.ts.)

const REQUEST = "Always run the tests after changing code.";

/**
 * The stand-in: as memory's extract worker (its system prompt is `memory_extract_system`) it
 * records the user's standing request only when the prompt asks for standing requests; as the
 * pod it answers "Noted.".
 */
function standIn(request: CapturedRequest): ScriptedResponse {
  const system = (request.body.system ?? []).map((part: { text: string }) => part.text).join("");
  // As a judge (`--judge`): grades what survived.
  if (system.includes("you grade that against the rubric")) {
    const graded = (request.body.messages ?? []).some((m: { role: string }) => m.role === "assistant");
    if (graded) return { parts: [{ type: "text", text: "Graded." }] };
    return {
      parts: [{ type: "tool_call", name: "final_answer", arguments: { score: 0.5, reason: "Half of it." } }],
    };
  }
  if (!system.includes("write_extracted")) return { parts: [{ type: "text", text: "Noted." }] };
  const answered = (request.body.messages ?? []).some((m: { role: string }) => m.role === "assistant");
  if (answered) return { parts: [{ type: "text", text: "Recorded." }] };
  const requests = system.includes("standing requests")
    ? [{ topic: "tests after changes", request: REQUEST }]
    : [];
  return {
    parts: [
      {
        type: "tool_call",
        name: "write_extracted",
        arguments: { decisions: [], discussions: [], attempts: [], requests },
      },
    ],
  };
}

let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic", respond: standIn });
  ws = await doubleWorkspace(double.baseUrl);
  await mkdir(join(ws.workspace, "packs"), { recursive: true });
  await writeFile(
    join(ws.workspace, "packs", "decisions-only.toml"),
    '[prompt]\nmemory_extract_system = "Extract the decisions of the session with write_extracted, in {{ language }}."\n',
  );
});
afterEach(async () => {
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

const podkit = (...args: string[]) =>
  runBin(args, { cwd: ws.workspace, env: { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" } });

describe("podkit eval --internal memory_extract", () => {
  it("scores what memory's extract keeps with the builtin prompt and with a changed one", async () => {
    const run = await podkit("run", `${REQUEST} What is in README.md?`);
    expect(run.code, run.stderr).toBe(0);
    const session = /podkit resume (\S+)/.exec(run.stderr)?.[1] as string;

    const same = await podkit(
      "eval",
      "--internal",
      "memory_extract",
      session,
      "--must-keep",
      REQUEST,
      "--ci",
    );
    expect(same.code, same.stdout + same.stderr).toBe(0);
    const lines = same.stdout.trimEnd().split("\n");
    expect(lines[1]).toMatch(/^case\s+score\s+baseline\s+diff\s+tokens after\s+base after\s+result$/);
    expect(lines[2]).toMatch(new RegExp(`^${session}\\s+1\\.000\\s+-\\s+-\\s+\\d+\\s+-\\s+pass$`));
    expect(lines.at(-1)).toBe("1 passed, 0 failed");
    // The extract staged into a scratch workspace, not the project's memory.
    expect(existsSync(join(ws.workspace, ".podkit", "memory"))).toBe(false);

    const worse = await podkit(
      "eval",
      "--internal",
      "memory_extract",
      session,
      "--must-keep",
      REQUEST,
      "--pack",
      "packs/decisions-only.toml",
      "--ci",
      "--json",
    );
    expect(worse.code, worse.stdout + worse.stderr).toBe(5);
    const report = JSON.parse(worse.stdout.trimEnd().split("\n").slice(0, -1).join("\n"));
    expect(report.items[0]).toMatchObject({ kind: "memory_extract", score: 0, pass: false });
    expect(report.items[0].scores[0].detail).toBe(`lost: ${JSON.stringify(REQUEST)}`);
    // The changed prompt is what the extract worker was given.
    expect(double.requests.some((r) => r.rawBody.includes("Extract the decisions of the session"))).toBe(
      true,
    );

    const shown = await podkit("session", "show", report.items[0].sessionId);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`eval item of ${session} turns 1-1`);
    expect(shown.stdout).toContain("✗ score checklist 0.000");
  }, 120_000);

  it("grades what survived with a judge from the command line; --must-keep without --internal is refused", async () => {
    const run = await podkit("run", `${REQUEST} What is in README.md?`);
    expect(run.code, run.stderr).toBe(0);
    const session = /podkit resume (\S+)/.exec(run.stderr)?.[1] as string;
    const judged = await podkit(
      "eval",
      "--internal",
      "memory_extract",
      session,
      "--judge",
      "default",
      "--json",
    );
    expect(judged.code, judged.stdout + judged.stderr).toBe(0);
    const report = JSON.parse(judged.stdout);
    expect(report.items[0].scores).toEqual([expect.objectContaining({ name: "judge", score: 0.5 })]);
    // The judge was asked with the catalog's rubric, about what the extract kept.
    const asked = double.requests.filter((r) => r.rawBody.includes("you grade that against the rubric"));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked[0]?.rawBody).toContain("tests after changes");

    const stray = await podkit("eval", session, "--must-keep", REQUEST);
    expect(stray.code).toBe(1);
    expect(stray.stderr).toContain("--must-keep applies to an internal prompt's replay only");
    expect(stray.stderr).not.toContain("    at ");
  }, 120_000);

  it("names a bad --internal kind, a bad case and a missing case in one line with a hint", async () => {
    const kind = await podkit("eval", "--internal", "summary", "x");
    expect(kind.code).toBe(1);
    expect(kind.stderr).toContain("--internal summary: unknown internal prompt");
    expect(kind.stderr).toContain("compaction, memory_extract");
    const none = await podkit("eval", "--internal", "compaction");
    expect(none.stderr).toContain("nothing to evaluate");
    const bad = await podkit("eval", "--internal", "compaction", "a@b@c");
    expect(bad.stderr).toContain("a@b@c: expected <session> or <session>@<segment>");
    const unknown = await podkit("eval", "--internal", "compaction", "no-such-session", "--must-keep", "x");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("eval case no-such-session: no such session in the store");
    for (const result of [kind, none, bad, unknown]) expect(result.stderr).not.toContain("    at ");
  }, 120_000);
});
