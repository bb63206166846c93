import type { ToolCallItem } from "@podkit/llm-worker";
import type { PermissionMode, PermissionRule } from "@podkit/manifest";
import { PermissionPolicy, type PermissionVerdict, ruleMatches } from "../permissions/permissions.js";
import type { ActiveSkill } from "./skill-records.js";

/** Claude Code's tool names in `allowed-tools`, as the pod's builtin tools are called. */
const TOOL_ALIASES: Readonly<Record<string, string>> = {
  Read: "read_file",
  Write: "write_file",
  Edit: "edit_file",
  MultiEdit: "edit_file",
  Glob: "glob",
  Grep: "grep",
  Bash: "bash",
};

/**
 * One `allowed-tools` entry as an allow rule: a tool name (a glob like a `[[permissions.rule]]`'s,
 * Claude Code's names mapped to the builtin tools), or `bash(<command pattern>)` —
 * `Bash(git status:*)` allows `git status` and what follows it. An entry that cannot be expressed
 * (a pattern on another tool) is no rule: it pre-approves nothing.
 */
export function allowedToolRule(entry: string): PermissionRule | undefined {
  const match = /^([A-Za-z0-9_*?.-]+)(?:\((.*)\))?$/s.exec(entry.trim());
  if (match === null) return undefined;
  const tool = TOOL_ALIASES[match[1] as string] ?? (match[1] as string);
  const pattern = match[2];
  if (pattern === undefined) return { tool, action: "allow" };
  if (tool !== "bash" || pattern.trim() === "") return undefined;
  return { tool, args: { command: pattern.trim().replace(/:\*$/, "*") }, action: "allow" };
}

/**
 * The allow the active skills give `call`, when `[skills] allow_tools` is on: the first active
 * skill whose SKILL.md the pod could not write when it was loaded and one of whose `allowed-tools`
 * covers the call (an allow rule's narrow `*`, which never spans a shell control character).
 */
export function skillAllowance(
  call: Pick<ToolCallItem, "name" | "arguments">,
  active: Iterable<ActiveSkill>,
): string | undefined {
  for (const skill of active) {
    if (skill.writable) continue;
    for (const entry of skill.allowed_tools) {
      const rule = allowedToolRule(entry);
      if (rule !== undefined && ruleMatches(rule, call, "narrow"))
        return `skill "${skill.name}" allowed-tools: ${entry}`;
    }
  }
  return undefined;
}

/**
 * The permission check with the active skills' `allowed-tools` after the manifest's rules: only
 * where the mode and the rules decide nothing does a skill's entry count, and then as an `allow`
 * (the builtin policy does not ask; hooks still run). So a skill never lifts a deny or an ask, never
 * runs a tool in `read_only` that changes things, and never reaches a tool the pod does not have or
 * a path its scope does not grant: authority only narrows.
 */
export class SkillPermissionPolicy extends PermissionPolicy {
  constructor(
    mode: PermissionMode,
    rules: readonly PermissionRule[],
    isReadOnly: (tool: string) => boolean,
    private readonly allowance: (call: Pick<ToolCallItem, "name" | "arguments">) => string | undefined,
  ) {
    super(mode, rules, isReadOnly);
  }

  override decide(call: Pick<ToolCallItem, "name" | "arguments">): PermissionVerdict {
    const verdict = super.decide(call);
    if (verdict.action !== "none") return verdict;
    const rule = this.allowance(call);
    return rule === undefined ? verdict : { action: "allow", rule };
  }
}
