import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// Typed answers at the CLI's doors (docs/output.md, "At every door"): `podkit run --output-schema`
// and `[output]` put the answer's JSON alone on stdout; `session show` shows it. Child processes
// against the provider double on the Anthropic wire.

const VERDICT = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["approve", "reject"] },
    findings: { type: "array", items: { type: "string" } },
  },
  required: ["verdict", "findings"],
  additionalProperties: false,
};
const OTHER = { type: "object", properties: { score: { type: "number" } }, required: ["score"] };

let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  ws = await doubleWorkspace(double.baseUrl);
  await writeFile(join(ws.workspace, "verdict.json"), JSON.stringify(VERDICT));
  await writeFile(join(ws.workspace, "README.md"), "hello\n");
});
afterEach(async () => {
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

const env = () => ({ HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
const podkit = (...args: string[]) => runBin(args, { cwd: ws.workspace, env: env() });
const sessionOf = (stderr: string) => /podkit resume (\S+)/.exec(stderr)?.[1] as string;
const answer = (args: Record<string, unknown>, id = "toolu_final"): ScriptedResponse => ({
  parts: [{ type: "tool_call", id, name: "final_answer", arguments: args }],
});
const readme: ScriptedResponse = {
  parts: [
    { type: "text", text: "Reading the readme first." },
    { type: "tool_call", id: "toolu_read", name: "read_file", arguments: { path: "README.md" } },
  ],
};

/** Runs `podkit <args> | jq -c .` in a shell: what a script consuming the answer sees. */
function throughJq(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const command = `"${process.execPath}" "${BIN}" ${args.map((a) => `'${a}'`).join(" ")} | jq -c .`;
  return new Promise((resolve) => {
    execFile(
      "/bin/bash",
      ["-o", "pipefail", "-c", command],
      { cwd: ws.workspace, env: { PATH: process.env.PATH ?? "", ...env() }, encoding: "utf8" },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe("podkit run --output-schema", () => {
  it("prints the checked answer's JSON alone on stdout, in a pipe through jq; the rest goes to stderr", async () => {
    double.enqueue(readme, answer({ output: { verdict: "approve", findings: ["one line"] } }));
    const result = await throughJq(["run", "Review the readme.", "--output-schema", "verdict.json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('{"verdict":"approve","findings":["one line"]}\n');
    // The tool line, the model's text and the closing line are on stderr, not mixed into the answer.
    expect(result.stderr).toContain("read_file");
    expect(result.stderr).toContain("Reading the readme first.");
    expect(result.stderr).toMatch(/continue it with: podkit resume \S+/);
    // The schema was the final_answer tool's input schema from the first request.
    expect(double.requests[0]?.rawBody).toContain('"final_answer"');
    expect(double.requests).toHaveLength(2);
  });

  it("--json: the event lines move to stderr, stdout is still the answer alone", async () => {
    double.enqueue(answer({ verdict: "reject", findings: [] }));
    const result = await podkit("run", "Review.", "--output-schema", "verdict.json", "--json");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('{"verdict":"reject","findings":[]}\n');
    const events = result.stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["turn_start", "run_end", "session"]));
  });

  it("an answer that never matches: exit 1, the violations and the hint on stderr, nothing on stdout", async () => {
    double.enqueue(
      answer({ verdict: "maybe", findings: [] }, "toolu_1"),
      answer({ verdict: "perhaps", findings: [] }, "toolu_2"),
      answer({ verdict: "unsure", findings: [] }, "toolu_3"),
    );
    const result = await podkit("run", "Review.", "--output-schema", "verdict.json");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^error: the model's answer does not match the output schema after 2 repairs: \/verdict: /m,
    );
    expect(result.stderr).toMatch(/^hint: try again; raise \[output\] max_repairs/m);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(double.requests).toHaveLength(3);
  });

  it("a turn that stops without an answer (max_turns) exits 3 with stdout empty", async () => {
    double.enqueue(readme);
    const result = await podkit(
      "run",
      "Review.",
      "--output-schema",
      "verdict.json",
      "--set",
      "worker.max_turns=1",
    );
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("the turn ended without a final answer: limit_reached");
  });

  it("a schema file that is missing, not JSON or not an object schema: exit 1 naming the file, nothing written or sent", async () => {
    await writeFile(join(ws.workspace, "broken.json"), '{\n  "type": "object",\n  "properties": }\n');
    await writeFile(join(ws.workspace, "list.json"), JSON.stringify({ type: "array" }));
    const cases: [string, RegExp][] = [
      ["missing.json", /^error: --output-schema missing\.json: no such file/m],
      ["broken.json", /^error: --output-schema broken\.json: it is not JSON: Unexpected token/m],
      ["list.json", /^error: --output-schema list\.json: it cannot be an output schema: /m],
    ];
    for (const [file, expected] of cases) {
      const result = await podkit("run", "Review.", "--output-schema", file);
      expect(result.code, file).toBe(1);
      expect(result.stdout, file).toBe("");
      expect(result.stderr, file).toMatch(expected);
      expect(result.stderr, file).toMatch(/^hint: give a JSON file holding a JSON Schema/m);
      expect(result.stderr, file).not.toMatch(/\n\s+at /);
    }
    expect(double.requests).toHaveLength(0);
    expect(existsSync(join(ws.workspace, ".podkit", "sessions"))).toBe(false);
  });

  it("[output] in the manifest: podkit run prints the answer's JSON on stdout without the flag", async () => {
    await writeFile(join(ws.workspace, ".podkit", "verdict.schema.json"), JSON.stringify(VERDICT));
    const manifest = join(ws.workspace, ".podkit", "manifest.toml");
    await writeFile(
      manifest,
      `${await readFile(manifest, "utf8")}\n[output]\nschema = "verdict.schema.json"\n`,
    );
    double.enqueue(answer({ verdict: "approve", findings: [] }));
    const result = await podkit("run", "Review.");
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ verdict: "approve", findings: [] });
    expect(result.stdout.split("\n")).toHaveLength(2);
  });

  it("interactive (piped lines): one answer per finished turn, as JSON Lines on stdout", async () => {
    double.enqueue(
      answer({ verdict: "approve", findings: [] }),
      answer({ verdict: "reject", findings: ["x"] }),
    );
    const result = await runBin(["run", "--output-schema", "verdict.json"], {
      cwd: ws.workspace,
      env: env(),
      input: "first\nsecond\n",
    });
    expect(result.code, result.stderr).toBe(0);
    expect(
      result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { verdict: "approve", findings: [] },
      { verdict: "reject", findings: ["x"] },
    ]);
  });
});

describe("podkit resume of a typed session", () => {
  it("with the same --output-schema prints the next answer; another schema is refused; none warns", async () => {
    double.enqueue(answer({ verdict: "approve", findings: [] }));
    const first = await podkit("run", "Review.", "--output-schema", "verdict.json");
    expect(first.code, first.stderr).toBe(0);
    const sessionId = sessionOf(first.stderr);

    double.enqueue(answer({ verdict: "reject", findings: ["again"] }, "toolu_again"));
    const again = await podkit("resume", sessionId, "Once more.", "--output-schema", "verdict.json");
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ verdict: "reject", findings: ["again"] });

    await writeFile(join(ws.workspace, "other.json"), JSON.stringify(OTHER));
    const other = await podkit("resume", sessionId, "Score it.", "--output-schema", "other.json");
    expect(other.code).toBe(1);
    expect(other.stdout).toBe("");
    expect(other.stderr).toMatch(
      /^error: --output-schema other\.json: session \S+ answers with schema sha256:[0-9a-f]{64}, this one is sha256:/m,
    );
    expect(double.requests).toHaveLength(2);

    double.enqueue({ parts: [{ type: "text", text: "plain words" }] });
    const plain = await podkit("resume", sessionId, "Say it in words.");
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toMatch(/^warning: session \S+'s answers were typed \(schema sha256:/m);
    expect(plain.stdout).toContain("plain words");
  });
});

describe("podkit session show of a typed answer", () => {
  it("prints the turn's output on one line; --json has the read model's output", async () => {
    double.enqueue(answer({ answer: JSON.stringify({ verdict: "approve", findings: ["a".repeat(200)] }) }));
    const run = await podkit("run", "Review.", "--output-schema", "verdict.json");
    expect(run.code, run.stderr).toBe(0);
    const sessionId = sessionOf(run.stderr);

    const text = await podkit("session", "show", sessionId);
    expect(text.code, text.stderr).toBe(0);
    const line = text.stdout.split("\n").find((l) => l.trim().startsWith("output:")) ?? "";
    expect(line).toMatch(
      /^ {7}output: \{"verdict":"approve","findings":\["a{50,}… \(schema sha256:[0-9a-f]{12}, unwrapped:answer, parsed_string\)$/,
    );

    const json = await podkit("session", "show", sessionId, "--json");
    const view = JSON.parse(json.stdout) as { segments: { turns: { output?: unknown }[] }[] };
    expect(view.segments.at(-1)?.turns[0]?.output).toEqual({
      value: { verdict: "approve", findings: ["a".repeat(200)] },
      schemaDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      normalizations: ["unwrapped:answer", "parsed_string"],
      repairs: 0,
    });
  });
});
