import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { PermissionRule } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import { globMatches, PermissionPolicy, ruleMatches, tighterMode } from "../src/permissions/permissions.js";
import { sessionEntries, text, toolCall, usePodWorlds } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, toolResults } from "./subpods-harness.js";

// Permission modes and rules (docs/permissions.md): checked in one place, before hooks and
// approvals, by the tool's declared effect — with real tools, real bash and the provider double.

const world = usePodWorlds();

/** A hash of every file under `dir` but podkit's own `.podkit/` (path and bytes, sorted). */
async function treeHash(dir: string): Promise<string> {
  const hash = createHash("sha256");
  const walk = async (at: string): Promise<void> => {
    for (const entry of (await readdir(at, { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      if (entry.name === ".podkit") continue;
      const path = join(at, entry.name);
      hash.update(`${path}\0`);
      if (entry.isDirectory()) await walk(path);
      else hash.update(await readFile(path));
    }
  };
  await walk(dir);
  return hash.digest("hex");
}

const WRITE_EVERYTHING = [
  toolCall("write_file", { path: "new.txt", content: "x" }, "toolu_w1"),
  toolCall("edit_file", { path: "README.md", old_text: "readme", new_text: "changed" }, "toolu_w2"),
  toolCall("bash", { command: "echo x > shell.txt" }, "toolu_w3"),
  toolCall("bash", { command: "rm README.md" }, "toolu_w4"),
  toolCall("bash", { command: "mkdir made && touch made/f" }, "toolu_w5"),
  text("done"),
];

const SCOPED = `[tools]\nbash = true\n[[scope.allow]]\ntarget = ".."\npermission = "write"\n`;

describe("permission modes", () => {
  it("read_only: every writing tool and shell command is denied, and the workspace stays byte-identical", async () => {
    const w = await world({ manifestExtra: SCOPED });
    const before = await treeHash(w.workspace);
    // --yes as well: it is the mode that stops the writes, not an approval.
    const pod = await w.pod({ mode: "read_only", autoApprove: true });
    w.double.enqueue(...WRITE_EVERYTHING);
    expect(await pod.run("write everything")).toMatchObject({ status: "finished" });
    expect(await treeHash(w.workspace)).toBe(before);
    const results = (await sessionEntries(w.workspace)).filter((e) => e.kind === "tool_result");
    expect(results).toHaveLength(5);
    for (const result of results) expect(JSON.stringify(result)).toContain("read_only mode");
  });

  it("positive control: the same calls in the default mode change the workspace", async () => {
    const w = await world({ manifestExtra: SCOPED });
    const before = await treeHash(w.workspace);
    const pod = await w.pod({ autoApprove: true });
    w.double.enqueue(...WRITE_EVERYTHING);
    expect(await pod.run("write everything")).toMatchObject({ status: "finished" });
    expect(await treeHash(w.workspace)).not.toBe(before);
  });

  it("read_only still runs the tools that only read", async () => {
    const w = await world({ manifestExtra: `${SCOPED}[permissions]\nmode = "read_only"\n` });
    const pod = await w.pod();
    w.double.enqueue(toolCall("read_file", { path: "README.md" }, "toolu_r"), text("read"));
    expect(await pod.run("read it")).toMatchObject({ status: "finished", text: "read" });
    const result = (await sessionEntries(w.workspace)).find((e) => e.kind === "tool_result");
    expect(JSON.stringify(result)).toContain("readme");
  });

  it("accept_edits: confirm_writes no longer asks for file edits, bash still asks", async () => {
    const w = await world({
      manifestExtra: `[tools]\nbash = true\nconfirm_writes = true\n[[scope.allow]]\ntarget = ".."\npermission = "write"\n[permissions]\nmode = "accept_edits"\n`,
    });
    const pod = await w.pod();
    w.double.enqueue(
      toolCall("write_file", { path: "new.txt", content: "x" }, "toolu_a1"),
      toolCall("bash", { command: "true" }, "toolu_a2"),
    );
    const result = await pod.run("go");
    expect(result.status).toBe("awaiting_approval");
    expect(result.approvals?.map((a) => a.tool)).toEqual(["bash"]);
    expect(await readFile(join(w.workspace, "new.txt"), "utf8")).toBe("x");
  });
});

describe("permission rules", () => {
  it("a deny rule on an argument pattern stops the call with its reason; the same call without it runs", async () => {
    const rule = `[[permissions.rule]]\ntool = "bash"\nargs = { command = "*README*" }\naction = "deny"\nreason = "the readme is frozen"\n`;
    const denied = await world({ manifestExtra: SCOPED + rule });
    const pod = await denied.pod({ mode: "bypass" });
    denied.double.enqueue(toolCall("bash", { command: "rm README.md" }, "toolu_d"), text("ok"));
    await pod.run("go");
    expect(JSON.stringify(await sessionEntries(denied.workspace))).toContain("the readme is frozen");
    expect(await readFile(join(denied.workspace, "README.md"), "utf8")).toBe("readme\n");

    const control = await world({ manifestExtra: SCOPED });
    const free = await control.pod({ mode: "bypass" });
    control.double.enqueue(toolCall("bash", { command: "rm README.md" }, "toolu_d"), text("ok"));
    await free.run("go");
    await expect(readFile(join(control.workspace, "README.md"), "utf8")).rejects.toThrow();
  });

  it("an ask rule asks about a tool the builtin policy never asks about, and names why", async () => {
    const w = await world({
      manifestExtra: `${SCOPED}[[permissions.rule]]\ntool = "read_file"\nargs = { path = "*.md" }\naction = "ask"\nreason = "docs are reviewed"\n`,
    });
    const pod = await w.pod();
    w.double.enqueue(toolCall("read_file", { path: "README.md" }, "toolu_q"));
    const result = await pod.run("read");
    expect(result.status).toBe("awaiting_approval");
    expect(result.approvals?.[0]).toMatchObject({
      tool: "read_file",
      askedBy: "permissions",
      reason: "docs are reviewed",
    });
  });

  it("an allow rule lets bash run without asking, but never a command its * would hide", async () => {
    const w = await world({
      manifestExtra: `${SCOPED}[[permissions.rule]]\ntool = "bash"\nargs = { command = "echo *" }\naction = "allow"\n`,
    });
    const pod = await w.pod();
    w.double.enqueue(toolCall("bash", { command: "echo hi" }, "toolu_e1"), text("ok"));
    expect(await pod.run("one")).toMatchObject({ status: "finished" });
    w.double.enqueue(toolCall("bash", { command: "echo hi; rm README.md" }, "toolu_e2"));
    const second = await pod.run("two");
    expect(second.status).toBe("awaiting_approval");
    expect(await readFile(join(w.workspace, "README.md"), "utf8")).toBe("readme\n");
  });
});

/** A root that may write, and a writer role (its own mode given by `roleMode`). */
const writerTree = (roleMode: string, rootMode = "default") => `
[tools]
builtin = ["read_file", "write_file", "edit_file", "glob", "grep"]
[[scope.allow]]
target = ".."
permission = "write"
[permissions]
mode = "${rootMode}"
[subpods.writer]
description = "writes files"
[subpods.writer.worker]
system_prompt = "WRITER"
[subpods.writer.permissions]
mode = "${roleMode}"
`;

describe("permission modes down the sub-pod tree", () => {
  const spawnWriter = () =>
    routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "writer", task: "write it" }, "call-root"), text("root done")],
      WRITER: [toolCall("write_file", { path: "child.txt", content: "x" }, "call-child"), text("child done")],
    });

  it("a role asking for a looser mode than its parent's runs in the parent's: a read_only root's child cannot write", async () => {
    const route = spawnWriter();
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: writerTree("bypass", "read_only"),
      double: { respond: route.respond },
    });
    await (await w.pod()).run("go").result;
    await expect(readFile(join(w.workspace, "child.txt"), "utf8")).rejects.toThrow();
    const child = [...(await entriesBySession(w.workspace)).values()].find((entries) =>
      JSON.stringify(entries).includes("call-child"),
    );
    expect(toolResults(child ?? [])[0]).toMatchObject({ isError: true });
    expect(toolResults(child ?? [])[0]?.summary).toContain("read_only mode");
  });

  it("a read_only role's child cannot write while its default-mode parent can; a default role's can (positive control)", async () => {
    const readOnly = spawnWriter();
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: writerTree("read_only"),
      double: { respond: readOnly.respond },
    });
    await (await w.pod()).run("go").result;
    await expect(readFile(join(w.workspace, "child.txt"), "utf8")).rejects.toThrow();

    const open = spawnWriter();
    const v = await world({
      systemPrompt: "ROOT",
      manifestExtra: writerTree("default"),
      double: { respond: open.respond },
    });
    await (await v.pod()).run("go").result;
    expect(await readFile(join(v.workspace, "child.txt"), "utf8")).toBe("x");
  });
});

describe("the rule engine", () => {
  const rule = (r: Partial<PermissionRule> & Pick<PermissionRule, "action">): PermissionRule => ({
    tool: "*",
    ...r,
  });
  const call = (name: string, args: object) => ({ name, arguments: JSON.stringify(args) });

  it("deny beats ask beats allow, whatever the order they are written in", () => {
    const rules = [
      rule({ action: "allow" }),
      rule({ action: "ask" }),
      rule({ action: "deny", reason: "no" }),
    ];
    for (const order of [rules, [...rules].reverse()]) {
      expect(new PermissionPolicy("default", order, () => true).decide(call("x", {}))).toEqual({
        action: "deny",
        reason: "no",
        by: "rule",
        rule: '[[permissions.rule]] tool = "*" action = "deny"',
      });
    }
    expect(new PermissionPolicy("default", rules.slice(0, 2), () => true).decide(call("x", {})).action).toBe(
      "ask",
    );
    expect(new PermissionPolicy("bypass", rules.slice(0, 2), () => true).decide(call("x", {})).action).toBe(
      "allow",
    );
    expect(new PermissionPolicy("read_only", [], () => false).decide(call("x", {})).action).toBe("deny");
  });

  it("matches tool and argument globs; a narrow * never spans a shell control character", () => {
    expect(globMatches("mcp__*", "mcp__fs__read")).toBe(true);
    expect(globMatches("git status*", "git status; rm -rf ~", "wide")).toBe(true);
    expect(globMatches("git status*", "git status; rm -rf ~", "narrow")).toBe(false);
    expect(globMatches("git status*", "git status --short", "narrow")).toBe(true);
    expect(globMatches("a.b", "axb")).toBe(false);
    expect(
      ruleMatches(
        rule({ action: "deny", args: { path: ".env*" } }),
        call("read_file", { path: ".env.local" }),
      ),
    ).toBe(true);
    expect(ruleMatches(rule({ action: "deny", args: { path: ".env*" } }), call("read_file", {}))).toBe(false);
    expect(ruleMatches(rule({ action: "deny", args: { n: "3" } }), call("t", { n: 3 }))).toBe(true);
    expect(
      ruleMatches(rule({ action: "deny", args: { n: "3" } }), { name: "t", arguments: "not json" }),
    ).toBe(false);
    expect(tighterMode("bypass", "read_only")).toBe("read_only");
    expect(tighterMode("default", "accept_edits")).toBe("default");
  });
});
