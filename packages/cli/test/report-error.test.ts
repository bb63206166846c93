import { ConfigurationError, ProviderError } from "@podkit/llm-worker";
import { ManifestError } from "@podkit/manifest";
import { PromptCatalogError } from "@podkit/pod";
import { CorruptEntryError, NotFoundError } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { PodkitCliError } from "../src/errors.js";
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
