import { type Permission, Scope, type ScopeRule, type ScopeRuleInput } from "@podkit/manifest";

/** What a child asks for: allow and deny rules as written (targets absolute). */
export interface AskedScope {
  readonly allow: readonly ScopeRuleInput[];
  readonly deny: readonly ScopeRuleInput[];
}

/** A loan: the child's scope, or the first asked rule the parent cannot lend, with why. */
export type ScopeLoan =
  | { readonly ok: true; readonly scope: Scope }
  | { readonly ok: false; readonly rule: string; readonly reason: string };

const RANK: Record<Permission, number> = { read: 1, write: 2 };

/**
 * Lends part of `parent` to a child: every rule the child asks to allow must already be granted
 * by the parent (at its target, with at least that permission, and over the whole subtree when
 * the asked rule is recursive), and the parent's deny rules are added to the child's own. The
 * child's scope is therefore the intersection of what it asks for and what the parent has — a
 * loan, never more. Decisions are made on canonical paths, so a symlink asks for no more than
 * its target would.
 */
export async function lendScope(parent: Scope, asked: AskedScope, workspace: string): Promise<ScopeLoan> {
  const wanted = await Scope.fromRules(asked.allow, asked.deny, workspace);
  for (const [index, rule] of wanted.allow.entries()) {
    const named = `scope.allow[${index}] (${rule.permission} ${rule.target}${rule.recursive ? "" : ", non-recursive"})`;
    const check = await parent.check(rule.target, rule.permission);
    if (!check.ok)
      return { ok: false, rule: named, reason: `the parent's scope refuses it: ${check.message}` };
    if (rule.recursive && !coversSubtree(parent, rule)) {
      return {
        ok: false,
        rule: named,
        reason: `the parent's scope does not grant ${rule.permission} over the whole subtree of ${rule.target}`,
      };
    }
  }
  const scope = await Scope.fromRules(wanted.allow, [...wanted.deny, ...parent.deny], workspace);
  return { ok: true, scope };
}

/** A recursive parent allow rule at or above `rule.target` granting at least `rule.permission`. */
function coversSubtree(parent: Scope, rule: ScopeRule): boolean {
  return parent.allow.some(
    (own) =>
      own.recursive &&
      RANK[own.permission] >= RANK[rule.permission] &&
      (rule.target === own.target || rule.target.startsWith(own.target === "/" ? "/" : `${own.target}/`)),
  );
}
