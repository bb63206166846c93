import { ConfigurationError, ERROR_KINDS, ProviderError } from "@podkit/llm-worker";
import { ManifestError } from "@podkit/manifest";
import { PromptCatalogError } from "@podkit/pod";
import {
  CorruptEntryError,
  InvalidEntryError,
  NotFoundError,
  SessionBusyError,
  UnsupportedFormatError,
} from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { PodkitCliError, UsageError } from "../src/errors.js";
import { type CommandSpec, main } from "../src/index.js";

// The CLI prints the hint an error carries and keeps no table of its own: each error class sets
// its hint itself (docs/errors.md).

async function report(error: unknown): Promise<{ code: number; stderr: string }> {
  const fail: CommandSpec = {
    path: ["fail"],
    summary: "throws",
    usage: "fail",
    run: async () => {
      throw error;
    },
  };
  let stderr = "";
  const code = await main(
    ["fail"],
    { stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) }, env: {}, cwd: "/" },
    [fail],
  );
  return { code, stderr };
}

describe("a podkit error is printed as its message plus the hint it carries", () => {
  it.each([
    [
      "a refused key",
      new ProviderError("anthropic answered HTTP 401: invalid x-api-key", {
        kind: "http",
        status: 401,
        isRetryable: false,
      }),
    ],
    ["bad model configuration", new ConfigurationError('no API key for model "openai/gpt-5"')],
    ["a corrupt log line", new CorruptEntryError({ file: "/s/a.jsonl", line: 3, reason: "not JSON" })],
    ["an unknown session", new NotFoundError({ what: "session", id: "x", where: "/s" })],
    [
      "a broken prompt pack",
      new PromptCatalogError("bad TOML", { layer: "workspace", file: "/w/prompts.toml" }),
    ],
    [
      "a manifest problem",
      new ManifestError("m.toml:1: bad", { kind: "schema", issues: [], hint: "fix the key shown" }),
    ],
    ["a CLI problem", new PodkitCliError("no manifest", { hint: "run podkit init" })],
  ])("%s", async (_what, error) => {
    const { code, stderr } = await report(error);
    expect(code).toBe(1);
    expect(error.hint).toMatch(/\S/);
    expect(stderr).toBe(`error: ${error.message}\nhint: ${error.hint}\n`);
  });

  it("has no hint of its own for an error that carries none, whatever its markers say", async () => {
    // A provider error of another copy of llm-worker that carries no hint: the CLI does not look
    // its class up anywhere, it asks for --debug.
    const bare = Object.assign(new Error("anthropic answered HTTP 401"), {
      [Symbol.for("podkit.llm-worker.error")]: true,
      [Symbol.for("podkit.llm-worker.error.provider")]: true,
      status: 401,
    });
    const { code, stderr } = await report(bare);
    expect(code).toBe(1);
    expect(stderr).toBe("error: anthropic answered HTTP 401\nhint: rerun with --debug for details\n");
  });
});

describe("the exit code is read off the error's kind (docs/cli.md, Errors and exit codes)", () => {
  const BUG = "hint: this is a bug in podkit; rerun with --debug and report the stack trace\n";
  const byKind = [
    ["usage", new ManifestError("m.toml:1: bad", { kind: "schema", issues: [] }), 1],
    ["not_found", new NotFoundError({ what: "session", id: "x", where: "/s" }), 1],
    [
      "conflict",
      new SessionBusyError({ sessionId: "s", segmentId: "g", expectedCount: 1, actualCount: 2 }),
      1,
    ],
    ["corrupt", new CorruptEntryError({ file: "/s/a.jsonl", line: 3, reason: "not JSON" }), 1],
    ["transient", new ProviderError("HTTP 503", { kind: "http", status: 503, isRetryable: true }), 1],
    ["unsupported", new UnsupportedFormatError({ file: "/s/a.jsonl", line: 1, version: 9 }), 1],
    ["internal", new InvalidEntryError({ kind: "turn_end", issues: "turn: expected number" }), 70],
  ] as const;

  it("covers every kind", () => {
    expect(byKind.map(([kind]) => kind)).toEqual([...ERROR_KINDS]);
  });

  it.each(byKind)("%s: exit %d", async (kind, error, exit) => {
    expect(error.errorKind).toBe(kind);
    expect((await report(error)).code).toBe(exit);
  });

  it("a podkit error of kind internal is announced as podkit's bug, with a bug report's hint", async () => {
    const { code, stderr } = await report(byKind[6][1]);
    expect(code).toBe(70);
    expect(stderr).toBe(`error: internal error: ${byKind[6][1].message}\n${BUG}`);
  });

  it("an internal error that carries a hint of its own keeps it", async () => {
    const error = new PodkitCliError("the demo's script and the pod disagree", {
      errorKind: "internal",
      hint: "this is a bug in the demo script; please report it",
    });
    const { code, stderr } = await report(error);
    expect(code).toBe(70);
    expect(stderr).toBe(`error: internal error: ${error.message}\nhint: ${error.hint}\n`);
  });

  it("a wrong command line is of kind usage and keeps its own code, 2", async () => {
    const error = new UsageError("unknown option --frob", { hint: "podkit --help lists the options" });
    expect(error.errorKind).toBe("usage");
    const { code, stderr } = await report(error);
    expect(code).toBe(2);
    expect(stderr).toBe(`error: ${error.message}\nhint: ${error.hint}\n`);
  });

  it("anything that is not podkit's is internal, whatever kind it claims: exit 70", async () => {
    for (const error of [
      new TypeError("x is undefined"),
      Object.assign(new Error("boom"), { errorKind: "usage" }),
    ]) {
      const { code, stderr } = await report(error);
      expect(code).toBe(70);
      expect(stderr).toBe(`error: internal error: ${error.message}\n${BUG}`);
    }
  });
});
