import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CommandSpec, commands, main } from "../src/index.js";

// In-process checks of the dispatcher with an injected io; the end-to-end behaviour of the real
// bin is covered by manifest-show.test.ts in a child process.

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-main-")));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function io() {
  const out = { stdout: "", stderr: "" };
  return {
    out,
    io: {
      stdout: { write: (s: string) => (out.stdout += s) },
      stderr: { write: (s: string) => (out.stderr += s) },
      env: { HOME: join(root, "home") },
      cwd: root,
    },
  };
}

describe("main", () => {
  it("dispatches a registered command with its parsed options, positionals and injected env", async () => {
    const seen: unknown[] = [];
    const echo: CommandSpec = {
      path: ["demo", "echo"],
      summary: "echo",
      usage: "demo echo <word> [--loud] [--tag t]...",
      options: { loud: { type: "boolean", help: "" }, tag: { type: "string", multiple: true, help: "" } },
      positionals: { min: 1, max: 1, names: "<word>" },
      run: async (input, ctx) => {
        seen.push(input, ctx.env.cwd, ctx.env.home, ctx.debug);
        ctx.io.stdout.write("done\n");
        return 3;
      },
    };
    const { io: cli, out } = io();
    const code = await main(["demo", "echo", "hi", "--loud", "--tag", "a", "--tag", "b", "--debug"], cli, [
      ...commands,
      echo,
    ]);
    expect(code).toBe(3);
    expect(out.stdout).toBe("done\n");
    expect(seen).toEqual([
      { values: { loud: true, tag: ["a", "b"] }, positionals: ["hi"] },
      root,
      join(root, "home"),
      true,
    ]);
    const missing = io();
    expect(await main(["demo", "echo"], missing.io, [echo])).toBe(2);
    expect(missing.out.stderr).toBe(
      'error: missing argument <word>\nhint: run "podkit demo echo --help" for its usage\n',
    );
  });

  it("reports an unexpected exception as an internal error with exit code 70 and no stack", async () => {
    const boom: CommandSpec = {
      path: ["boom"],
      summary: "fails",
      usage: "boom",
      run: async () => {
        throw new TypeError("cannot read properties of undefined");
      },
    };
    const { io: cli, out } = io();
    expect(await main(["boom"], cli, [boom])).toBe(70);
    expect(out.stderr).toBe(
      "error: internal error: cannot read properties of undefined\nhint: this is a bug in podkit; rerun with --debug and report the stack trace\n",
    );
  });

  it("registers manifest show in the shipped command list", () => {
    expect(commands.map((c) => c.path.join(" "))).toContain("manifest show");
  });
});
