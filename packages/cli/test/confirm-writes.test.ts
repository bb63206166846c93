import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, runBin } from "./run-bin.js";
import { PtyScreen } from "./support/pty-screen.js";
import { doubleWorkspace } from "./support/workspace.js";

// `[tools] confirm_writes = true`: write_file and edit_file calls wait for a person's approval
// like bash does; without a terminal they stay pending (exit code 4) unless --yes is given.

let double: ProviderDouble;
let root: string;
let screen: PtyScreen | undefined;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  screen?.kill();
  screen = undefined;
  await double.close();
  await rm(root, { recursive: true, force: true });
});

const writeCall = {
  parts: [
    { type: "tool_call", name: "write_file", arguments: { path: "notes.txt", content: "approved text" } },
  ],
} satisfies ScriptedResponse;
const editCall = {
  parts: [
    {
      type: "tool_call",
      name: "edit_file",
      arguments: { path: "notes.txt", old_string: "approved", new_string: "edited" },
    },
  ],
} satisfies ScriptedResponse;
const done = { parts: [{ type: "text", text: "done writing" }] } satisfies ScriptedResponse;

/** A double workspace whose manifest sets `[tools] confirm_writes` as given. */
async function workspace(confirmWrites: boolean) {
  const ws = await doubleWorkspace(double.baseUrl);
  root = ws.root;
  const manifest = join(ws.workspace, ".podkit", "manifest.toml");
  const text = await readFile(manifest, "utf8");
  await writeFile(manifest, text.replace("bash = true", `bash = true\nconfirm_writes = ${confirmWrites}`));
  return ws;
}

const envOf = (home: string) => ({ HOME: home, ANTHROPIC_API_KEY: "test-key" });

describe("[tools] confirm_writes = true", () => {
  it("in a terminal, write_file waits for approval (nothing is written before y) and a denied edit_file changes nothing", async () => {
    const ws = await workspace(true);
    double.enqueue(writeCall, editCall, done);
    screen = new PtyScreen(process.execPath, [BIN, "run", "write the notes"], {
      cwd: ws.workspace,
      env: { PATH: process.env.PATH ?? "", ...envOf(ws.home), TERM: "xterm-256color" },
    });
    await screen.waitFor("Allow write_file(notes.txt)? [y]es / [n]o / [a]lways:");
    // The call is held: the model has been asked once and the file does not exist yet.
    expect(double.requests).toHaveLength(1);
    expect(existsSync(join(ws.workspace, "notes.txt"))).toBe(false);
    screen.type("y\r");
    await screen.waitFor("✓ write_file(notes.txt, approved text)");
    expect(await readFile(join(ws.workspace, "notes.txt"), "utf8")).toBe("approved text");

    await screen.waitFor("Allow edit_file(notes.txt)?");
    screen.type("n\r");
    await screen.waitFor("done writing");
    expect(await screen.exited).toBe(0);
    expect(await screen.text()).toContain(
      "✗ edit_file(notes.txt, approved, edited) → denied: the user denied this edit_file call",
    );
    expect(await readFile(join(ws.workspace, "notes.txt"), "utf8")).toBe("approved text");
  });

  it("without a terminal and without --yes, the call waits for approval: exit code 4, nothing written", async () => {
    const ws = await workspace(true);
    double.enqueue(writeCall);
    const result = await runBin(["run", "write the notes"], { cwd: ws.workspace, env: envOf(ws.home) });
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toContain("write_file(notes.txt)");
    expect(result.stderr).toMatch(/answer: podkit approve \S+ \S+ --allow/);
    expect(existsSync(join(ws.workspace, "notes.txt"))).toBe(false);
    expect(double.requests).toHaveLength(1);
  });

  it("--yes approves write_file and edit_file without asking", async () => {
    const ws = await workspace(true);
    double.enqueue(writeCall, editCall, done);
    const result = await runBin(["run", "write the notes", "--yes"], {
      cwd: ws.workspace,
      env: envOf(ws.home),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("denied");
    expect(await readFile(join(ws.workspace, "notes.txt"), "utf8")).toBe("edited text");
  });

  it("positive control: with confirm_writes = false the same call is written without a terminal or --yes", async () => {
    const ws = await workspace(false);
    double.enqueue(writeCall, done);
    const result = await runBin(["run", "write the notes"], { cwd: ws.workspace, env: envOf(ws.home) });
    expect(result.code).toBe(0);
    expect(await readFile(join(ws.workspace, "notes.txt"), "utf8")).toBe("approved text");
  });
});
