import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit run --mode` through the real binary (docs/permissions.md).

let double: ProviderDouble;
let root: string;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  await double.close();
  await rm(root, { recursive: true, force: true });
});

const writes = () =>
  double.enqueue(
    {
      parts: [
        { type: "tool_call", id: "toolu_1", name: "bash", arguments: { command: "touch made-by-bash" } },
      ],
    },
    { parts: [{ type: "text", text: "done" }] },
  );

describe("podkit run --mode", () => {
  it("read_only denies a writing command even with --yes; without the mode it runs (positive control)", async () => {
    const ws = await doubleWorkspace(double.baseUrl);
    root = ws.root;
    const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" };
    writes();
    const denied = await runBin(["run", "--mode", "read_only", "--yes", "make a file"], {
      cwd: ws.workspace,
      env,
    });
    expect(denied.code, denied.stderr).toBe(0);
    expect(existsSync(join(ws.workspace, "made-by-bash"))).toBe(false);
    expect(JSON.stringify(double.requests.at(-1)?.body)).toContain("read_only mode");

    writes();
    const allowed = await runBin(["run", "--yes", "make a file"], { cwd: ws.workspace, env });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(existsSync(join(ws.workspace, "made-by-bash"))).toBe(true);
  });

  it("an unknown mode is a usage error naming the modes", async () => {
    const ws = await doubleWorkspace(double.baseUrl);
    root = ws.root;
    const result = await runBin(["run", "--mode", "yolo", "hi"], {
      cwd: ws.workspace,
      env: { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error: --mode must be one of read_only, default, accept_edits, bypass, got "yolo"\nhint: /,
    );
    expect(double.requests).toHaveLength(0);
  });
});
