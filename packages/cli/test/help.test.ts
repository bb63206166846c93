import { describe, expect, it } from "vitest";
import { EXIT_CODES } from "../src/help.js";
import { commands, main } from "../src/index.js";

function capture() {
  const out = { stdout: "", stderr: "" };
  const io = {
    stdout: { write: (s: string) => (out.stdout += s) },
    stderr: { write: (s: string) => (out.stderr += s) },
    env: {},
    cwd: "/",
  };
  return { out, io };
}

/** The lines of a help text's `Options:` block. */
function optionLines(help: string): string[] {
  const block = help.split("\nOptions:\n")[1] ?? "";
  return (block.split("\n\n")[0] ?? "").split("\n").filter((line) => line !== "");
}

describe("help", () => {
  it("podkit --help lists every command with its summary, the options and the exit codes", async () => {
    const { out, io } = capture();
    expect(await main(["--help"], io)).toBe(0);
    const spec6 = [
      "init",
      "run",
      "resume",
      "approve",
      "approvals",
      "prompt render",
      "prompt catalog",
      "session list",
      "session show",
      "session fork",
      "session doctor",
      "session rewind",
      "store gc",
      "policy check",
      "compact",
      "eval",
      "memory extract",
      "memory consolidate",
      "memory lint",
      "memory query",
      "manifest show",
      "demo",
      // dispatched runs (docs/dispatch.md)
      "submit",
      "worker",
      "runs list",
      "runs show",
      "runs cancel",
      "serve",
    ];
    expect(commands.map((c) => c.path.join(" ")).sort()).toEqual([...spec6].sort());
    for (const command of commands) {
      expect(out.stdout).toMatch(
        new RegExp(`^ {2}${command.path.join(" ")} +${escapeRegExp(command.summary)}$`, "m"),
      );
    }
    for (const [code, meaning] of EXIT_CODES)
      expect(out.stdout).toMatch(new RegExp(`^ {2}${code} +${escapeRegExp(meaning)}$`, "m"));
    const globalOptions = optionLines(out.stdout);
    // `.every` on no lines passes, so the block must be found and hold options first.
    expect(globalOptions.length).toBeGreaterThanOrEqual(2);
    for (const line of globalOptions) expect(line).toMatch(/^ {2}-\S.* {2,}\S/);
  });

  it("each command's --help lists its options, each with a one-line description", async () => {
    for (const command of commands) {
      const { out, io } = capture();
      expect(await main([...command.path, "--help"], io)).toBe(0);
      expect(out.stdout).toContain(`Usage: podkit ${command.usage}`);
      const lines = optionLines(out.stdout);
      // The command's own options, then --help, --workspace and --debug.
      expect(lines.length).toBe(Object.keys(command.options ?? {}).length + 3);
      for (const line of lines) expect(line).toMatch(/^ {2}-\S.* {2,}\S.*$/);
      for (const name of Object.keys(command.options ?? {})) expect(out.stdout).toContain(`--${name}`);
    }
  });

  it("every command that lists or shows things offers --json", () => {
    const listings = [
      "prompt catalog",
      "session list",
      "session show",
      "session fork",
      "session doctor",
      "session rewind",
      "store gc",
      "memory lint",
      "memory query",
      "memory extract",
      "memory consolidate",
      "manifest show",
      "compact",
      "eval",
      "run",
      "resume",
      "approve",
      "approvals",
      "policy check",
    ];
    for (const path of listings) {
      const command = commands.find((c) => c.path.join(" ") === path);
      expect(command?.options?.json, path).toBeDefined();
      expect(command?.usage, path).toContain("[--json]");
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
