import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PodOptions } from "../src/pod/pod-options.js";
import { allowedToolRule } from "../src/skills/skill-approvals.js";
import { sessionEntries, text, toolCall, usePodWorlds } from "./pod-harness.js";
import { type SkillSpec, writeSkill } from "./support/skills.js";

const world = usePodWorlds();

/** A pod that may write the workspace and asks before each write (`confirm_writes`). */
const WRITES = `[[scope.allow]]\ntarget = ".."\npermission = "write"\n[tools]\nconfirm_writes = true\n`;
const WRITER: SkillSpec = { name: "writer", description: "Writes notes.", allowedTools: ["write_file"] };

/**
 * A world with `skill` (in `.podkit/skills` unless `dir` says otherwise) and `[skills]` set as
 * given; the pod loads the skill when `load`, then calls write_file once. Returns the run's
 * result, the log and whether the file was written.
 */
async function writeAfterSkill(options: {
  skills: string;
  load: boolean;
  skill?: SkillSpec;
  dir?: string;
  extra?: string;
  pod?: PodOptions;
}) {
  const w = await world({ manifestExtra: `${WRITES}[skills]\n${options.skills}\n${options.extra ?? ""}` });
  await writeSkill(join(w.workspace, options.dir ?? ".podkit/skills"), options.skill ?? WRITER);
  const pod = await w.pod(options.pod);
  const name = (options.skill ?? WRITER).name;
  w.double.enqueue(
    ...(options.load ? [toolCall("skill", { name }, "toolu_skill")] : []),
    toolCall("write_file", { path: "note.txt", content: "noted" }, "toolu_write"),
    text("done"),
  );
  const result = await pod.run("write a note");
  const entries = await sessionEntries(w.workspace);
  const written = existsSync(join(w.workspace, "note.txt"))
    ? await readFile(join(w.workspace, "note.txt"), "utf8")
    : undefined;
  const asked = entries.some((e) => e.kind === "approval_requested" && e.call_id === "toolu_write");
  const decisions = entries.flatMap((e) =>
    e.kind === "extension" && e.domain === "policy.decision" ? [e.payload as Record<string, unknown>] : [],
  );
  return { result, asked, written, decisions };
}

describe("allowed-tools", () => {
  it("without [skills] allow_tools a loaded skill's allowed-tools pre-approve nothing: write_file asks", async () => {
    const off = await writeAfterSkill({ skills: "", load: true });
    expect(off.result.status).toBe("awaiting_approval");
    expect(off.asked).toBe(true);
    expect(off.written).toBeUndefined();
  });

  it("with allow_tools = true the loaded skill's tools run without asking, and the decision names the skill; not before it is loaded", async () => {
    const on = await writeAfterSkill({ skills: "allow_tools = true", load: true });
    expect(on.result.status).toBe("finished");
    expect(on.asked).toBe(false);
    expect(on.written).toBe("noted");
    expect(on.decisions).toEqual([
      expect.objectContaining({
        decided_by: "rule",
        outcome: "allow",
        call_id: "toolu_write",
        tool: "write_file",
        rule: 'skill "writer" allowed-tools: write_file',
      }),
    ]);
    // Positive control: the same pod, the skill not loaded, asks.
    const notLoaded = await writeAfterSkill({ skills: "allow_tools = true", load: false });
    expect(notLoaded.result.status).toBe("awaiting_approval");
    expect(notLoaded.asked).toBe(true);
  });

  it("authority only narrows: a deny rule, an ask rule and read_only mode still hold; a tool the pod lacks stays unknown", async () => {
    const denied = await writeAfterSkill({
      skills: "allow_tools = true",
      load: true,
      extra: `[[permissions.rule]]\ntool = "write_file"\naction = "deny"\nreason = "no notes"\n`,
    });
    expect(denied.written).toBeUndefined();
    expect(denied.decisions).toEqual([expect.objectContaining({ decided_by: "rule", outcome: "deny" })]);

    const ask = await writeAfterSkill({
      skills: "allow_tools = true",
      load: true,
      extra: `[[permissions.rule]]\ntool = "write_file"\naction = "ask"\n`,
    });
    expect(ask.asked).toBe(true);

    const readOnly = await writeAfterSkill({
      skills: "allow_tools = true",
      load: true,
      pod: { mode: "read_only" },
    });
    expect(readOnly.written).toBeUndefined();
    expect(readOnly.decisions).toEqual([expect.objectContaining({ decided_by: "mode", outcome: "deny" })]);

    // bash is not on this pod's list: a skill naming it gets nothing to run.
    const w = await world({ manifestExtra: `${WRITES}[skills]\nallow_tools = true\n` });
    await writeSkill(join(w.workspace, ".podkit/skills"), { ...WRITER, allowedTools: ["bash"] });
    const pod = await w.pod();
    w.double.enqueue(
      toolCall("skill", { name: "writer" }),
      toolCall("bash", { command: "touch x" }),
      text("ok"),
    );
    await pod.run("go");
    expect(existsSync(join(w.workspace, "x"))).toBe(false);
    const results = (await sessionEntries(w.workspace)).filter((e) => e.kind === "tool_result");
    expect(JSON.stringify(results.at(-1))).toContain('"is_error":true');
  });

  it("a skill the pod could have written itself (writable .claude/skills) pre-approves nothing; the same skill under .podkit does", async () => {
    const writable = await writeAfterSkill({
      skills: "allow_tools = true\nclaude = true",
      load: true,
      dir: ".claude/skills",
    });
    expect(writable.asked).toBe(true);
    expect(writable.written).toBeUndefined();
    const entries = await writeAfterSkill({ skills: "allow_tools = true\nclaude = true", load: true });
    expect(entries.asked).toBe(false);
  });

  it("reads allowed-tools entries as allow rules: names, Claude Code's names, and bash command patterns", () => {
    expect(allowedToolRule("write_file")).toEqual({ tool: "write_file", action: "allow" });
    expect(allowedToolRule("Read")).toEqual({ tool: "read_file", action: "allow" });
    expect(allowedToolRule("mcp__github__*")).toEqual({ tool: "mcp__github__*", action: "allow" });
    expect(allowedToolRule("Bash(git status:*)")).toEqual({
      tool: "bash",
      args: { command: "git status*" },
      action: "allow",
    });
    // A pattern on another tool cannot be expressed: it is no rule at all (never a wider one).
    expect(allowedToolRule("Read(./src/**)")).toBeUndefined();
    expect(allowedToolRule("bash()")).toBeUndefined();
    expect(allowedToolRule("not a tool")).toBeUndefined();
  });
});
