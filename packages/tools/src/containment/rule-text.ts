import { isAbsolute, relative } from "node:path";
import type { ToolDenial } from "@podkit/llm-worker";
import type { ScopeDenial, ScopeRule } from "@podkit/manifest";

/**
 * The words a containment refusal names its rule with (`ToolDenial.rule`), shared by the file
 * tools' scope check and the sandbox's reports, so the same rule reads the same in the log
 * whichever enforcer applied it.
 */

/** No allow rule covers the path. */
export const OUTSIDE_SCOPE_RULE = "outside the scope";
/** `<workspace>/.podkit/`, the sessions, the memory: never writable from inside a pod. */
export const PODKIT_FILES_RULE = "podkit's own files";
/** A path that does not exist yet with `..` after the missing part: the scope cannot tell where it lands. */
export const PARENT_TRAVERSAL_RULE = '".." after a missing directory';

/** A `bash` call asked to run outside the sandbox without the pod's approval of that call. */
export const ESCALATION_NOT_APPROVED_RULE = "escalation not approved";
/** A sub-pod's call asked to run outside the sandbox: its sandbox is a loan and never lets go. */
export const ESCALATION_LOANED_RULE = "no escalation from a sub-pod's sandbox";

/** Where the scope grants read but not write. */
export function notWritableRule(shown: string): string {
  return `not writable: ${shown}`;
}

/**
 * A deny rule as the manifest spells it, its target relative to the workspace when inside it:
 * `deny = ".env"` (no access), `deny = ".git/hooks" (write)` (read only), with ` [non-recursive]`
 * after a non-recursive rule. The target is the canonical one the scope decided on.
 */
export function scopeRuleText(rule: ScopeRule, workspace: string): string {
  const permission = rule.permission === "read" ? "" : ` (${rule.permission})`;
  return `deny = "${workspacePath(workspace, rule.target)}"${permission}${rule.recursive ? "" : " [non-recursive]"}`;
}

/** A canonical path as messages show it: relative to the workspace when inside it, else absolute. */
export function workspacePath(workspace: string, canonical: string): string {
  const rel = relative(workspace, canonical);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? canonical : rel;
}

/**
 * The `denied` of a tool output for a refusal of `Scope#check`: by the scope, under the rule that
 * refused. Undefined for a path the scope could not canonicalize (a symlink loop, no permission
 * to look), which no rule decided.
 */
export function scopeDenial(check: ScopeDenial, workspace: string): ToolDenial | undefined {
  const rule = scopeDenialRule(check, workspace);
  return rule === undefined ? undefined : { by: "scope", rule, reason: check.message };
}

/** The rule a refusal of `Scope#check` names; undefined where no rule decided (`unresolvable`). */
export function scopeDenialRule(check: ScopeDenial, workspace: string): string | undefined {
  switch (check.reason) {
    case "not-allowed":
      return OUTSIDE_SCOPE_RULE;
    case "read-only":
      return notWritableRule(workspacePath(workspace, check.path));
    case "denied-by-rule":
      return check.rule === undefined ? undefined : scopeRuleText(check.rule, workspace);
    case "parent-traversal":
      return PARENT_TRAVERSAL_RULE;
    case "unresolvable":
      return undefined;
  }
}
