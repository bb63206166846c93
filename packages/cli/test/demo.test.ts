import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, REPO_ROOT, runBin } from "./run-bin.js";
import { everyInvokeClosed, sessionEntries } from "./support/workspace.js";

let root: string;
let double: ProviderDouble;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-demo-")));
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  await double.close();
  await rm(root, { recursive: true, force: true });
});

/** The README's `npm run demo` after its set-up step: the command the root package.json runs. */
async function readmeDemoCommand(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as {
    scripts: { demo: string };
  };
  const steps = pkg.scripts.demo.split("&&").map((step) => step.trim());
  expect(steps[0]).toBe("node scripts/setup.mjs");
  const args = (steps.at(-1) as string).split(/\s+/);
  expect(args.slice(0, 2)).toEqual(["node", "packages/cli/dist/bin.js"]);
  return args.slice(2);
}

describe("podkit demo", () => {
  it("runs the README's main job offline, says the model is scripted, and leaves a session that show prints and resume continues", async () => {
    const args = await readmeDemoCommand();
    expect(args).toEqual(["demo"]);
    const workspace = join(root, "demo");
    const demo = await runBin([...args, "--dir", workspace], {
      cwd: REPO_ROOT,
      env: { HOME: join(root, "home") },
    });
    expect(demo.stderr).toBe("");
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain("The MODEL IS SCRIPTED");
    for (const step of [
      "Render the system prompt",
      "Tool-using turns",
      "A review by a read-only child pod",
      "A notification",
      "An interrupted turn",
      "Restore",
    ]) {
      expect(demo.stdout).toContain(step);
    }
    // The real tools changed the scratch copy and the real tests ran in it.
    expect(await readFile(join(workspace, "src", "tickets.js"), "utf8")).toContain("RangeError");
    expect(demo.stdout).toContain("✓ bash(node --test test/");
    expect(demo.stdout).toContain("byte-identical to the first request's: yes");
    const sessionId = /podkit session show ([0-9a-f-]{36})/.exec(demo.stdout)?.[1] as string;
    const entries = await sessionEntries(workspace, sessionId);
    expect(everyInvokeClosed(entries)).toBe(true);
    // Two segments: the compacted one and the head that continues it.
    expect(
      entries.filter((e) => e.kind === "segment_start").map((e) => e.compacted_from !== undefined),
    ).toEqual([false, true]);
    expect(
      await readFile(join(workspace, ".podkit", "memory", "decisions", "ticket-id-validation.md"), "utf8"),
    ).toContain("RangeError");
    expect(await readFile(join(workspace, ".podkit", "memory", "summary.md"), "utf8")).toContain(
      "#ticket-id-validation",
    );

    // The review step: a child session linked to this one, read-only, and the tree printed.
    const childId = /└ reviewer \(depth 1\) (\S+) {2}1 turn\(s\)/.exec(demo.stdout)?.[1] as string;
    expect(childId, demo.stdout).toBeDefined();
    expect(demo.stdout).toContain(`  root ${sessionId}  3 turn(s)  ← this session`);
    const child = await sessionEntries(workspace, childId);
    expect(child[0]).toMatchObject({
      kind: "segment_start",
      parent: { session_id: sessionId, role: "reviewer", depth: 1 },
    });
    const childPrompt = String(child[0]?.system_prompt);
    // Its own prompt pack (the scope section in a reviewer's words) and a read-only loan.
    expect(childPrompt).toContain("You are a reviewer: you read, you never change anything. Readable:");
    expect(childPrompt).not.toContain("Writable");
    expect(demo.stdout).toContain(
      "the reviewer's model was offered: glob, grep, read_file — no write tool, no bash (besides compaction's own tools, refused outside a compaction)",
    );
    const childCalls = child.flatMap((e) =>
      e.kind === "tool_result" ? [(e.item as { name?: string }).name] : [],
    );
    expect(childCalls).toHaveLength(2);
    expect(demo.stdout).toContain("root › reviewer#1 answers: Sound.");
    expect(everyInvokeClosed(child)).toBe(true);

    const shown = await runBin(["session", "show", sessionId], {
      cwd: workspace,
      env: { HOME: join(root, "home") },
    });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`session ${sessionId}`);
    expect(shown.stdout).toContain('"Fix that TODO, add a test, and run the tests." → finished');
    expect(shown.stdout).toContain("✓ bash: exit code 0");
    expect(shown.stdout).toMatch(/compacted segment \(→ \S+\)/);
    expect(shown.stdout).toContain('6. "Remind me what we did today." → finished');
    expect(shown.stdout).toContain(`└ reviewer (depth 1) ${childId}`);

    double.enqueue(
      { parts: [{ type: "text", text: "Continuing the demo session." }] },
      // Memory's final pass when the one-shot pod closes: the new turn, nothing worth keeping.
      {
        parts: [
          {
            type: "tool_call",
            name: "write_extracted",
            arguments: { decisions: [], discussions: [], attempts: [], requests: [] },
          },
        ],
      },
      { parts: [{ type: "text", text: "Recorded." }] },
    );
    const resumed = await runBin(
      ["resume", sessionId, "what next?", "--set", `model.base_url=${double.baseUrl}`],
      { cwd: workspace, env: { HOME: join(root, "home"), ANTHROPIC_API_KEY: "test-key" } },
    );
    expect(resumed.stdout).toBe("Continuing the demo session.\n");
    expect(resumed.code).toBe(0);
    expect(JSON.stringify(double.requests[0]?.body.messages)).toContain("Remind me what we did today.");
  });

  it("refuses a --dir that is not empty, naming it, with a hint", async () => {
    const result = await runBin(["demo", "--dir", REPO_ROOT], {
      cwd: root,
      env: { HOME: join(root, "home") },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: ${REPO_ROOT} already exists and is not empty\nhint: pass --dir a new directory (the demo writes a workspace there), or leave --dir out for a temp one\n`,
    );
    expect(BIN).toContain("dist/bin.js");
  });
});
