import type { ToolCallItem } from "@podkit/llm-worker";
import type { LoadedManifest, PermissionMode, PermissionRule } from "@podkit/manifest";
import { PERMISSION_MODES } from "@podkit/manifest";

/**
 * What the permission check decided about a call, before hooks and approvals (docs/permissions.md):
 * `deny` (it never runs; the model gets the reason), `ask` (an approval, whatever the builtin
 * policy says), `allow` (the builtin policy does not ask; hooks still run), or `none`.
 */
export type PermissionVerdict =
  | { action: "deny"; reason: string; by: "mode" | "rule"; rule: string }
  | { action: "ask"; reason?: string; rule: string }
  | { action: "allow"; rule: string }
  | { action: "none" };

/** The tighter of two modes (`read_only` is the tightest, `bypass` the loosest). */
export function tighterMode(a: PermissionMode, b: PermissionMode): PermissionMode {
  return PERMISSION_MODES.indexOf(a) <= PERMISSION_MODES.indexOf(b) ? a : b;
}

/**
 * The mode a pod runs in: a root takes `override` (`PodOptions.mode`, the CLI's `--mode`) or its
 * manifest's `[permissions] mode`; a child the tighter of its parent's mode (passed as `override`)
 * and its role's — a child can only tighten.
 */
export function effectiveMode(
  loaded: LoadedManifest,
  override: PermissionMode | undefined,
  child: boolean,
): PermissionMode {
  const own = loaded.manifest.permissions.mode;
  if (override === undefined) return own;
  return child ? tighterMode(override, own) : override;
}

/**
 * The builtin approval policy under `mode`: `bash` asks, the write tools ask with
 * `[tools] confirm_writes`; `accept_edits` drops the write tools, `bypass` asks about nothing.
 */
export function builtinPolicyFor(loaded: LoadedManifest, mode: PermissionMode): ReadonlyMap<string, string> {
  const policy = new Map<string, string>();
  if (mode === "bypass") return policy;
  policy.set("bash", "bash");
  if (loaded.manifest.tools.confirm_writes && mode !== "accept_edits") {
    policy.set("write_file", "confirm_writes");
    policy.set("edit_file", "confirm_writes");
  }
  return policy;
}

/**
 * The one place a call meets the mode and the manifest's rules, in this order: (1) in `read_only`
 * a tool that may change anything is denied, whatever it is called (by its declared effect,
 * `Tool.readOnly`); (2) the rules of every layer: any matching `deny` denies, else any `ask` asks
 * (not in `bypass`), else any `allow` allows — the order rules are written in never matters.
 */
export class PermissionPolicy {
  constructor(
    readonly mode: PermissionMode,
    private readonly rules: readonly PermissionRule[],
    private readonly isReadOnly: (tool: string) => boolean,
  ) {}

  decide(call: Pick<ToolCallItem, "name" | "arguments">): PermissionVerdict {
    if (this.mode === "read_only" && !this.isReadOnly(call.name)) {
      return {
        action: "deny",
        reason: `the pod runs in read_only mode: ${call.name} may change files or other state, so it did not run; only tools that read run in this mode`,
        by: "mode",
        rule: 'mode = "read_only"',
      };
    }
    const matching = this.rules.filter((rule) =>
      ruleMatches(rule, call, rule.action === "allow" ? "narrow" : "wide"),
    );
    const deny = matching.find((rule) => rule.action === "deny");
    if (deny !== undefined) {
      const rule = describeRule(deny);
      return { action: "deny", reason: deny.reason ?? `denied by the rule ${rule}`, by: "rule", rule };
    }
    const ask = matching.find((rule) => rule.action === "ask");
    if (ask !== undefined && this.mode !== "bypass") {
      const rule = describeRule(ask);
      return { action: "ask", reason: ask.reason ?? `the rule ${rule} asks`, rule };
    }
    const allow = ask ?? matching.find((rule) => rule.action === "allow");
    if (allow !== undefined) return { action: "allow", rule: describeRule(allow) };
    return { action: "none" };
  }
}

/** `tool = "bash" args = { command = "git push*" }`, as the manifest spells it. */
export function describeRule(rule: PermissionRule): string {
  const args = Object.entries(rule.args ?? {})
    .map(([key, pattern]) => `${key} = ${JSON.stringify(pattern)}`)
    .join(", ");
  return `[[permissions.rule]] tool = ${JSON.stringify(rule.tool)}${args === "" ? "" : ` args = { ${args} }`} action = "${rule.action}"`;
}

/**
 * True when `rule` covers `call`: its `tool` glob matches the name and each of its `args` globs
 * matches that argument (a string as it is, anything else as JSON); arguments that are not JSON
 * match no rule with `args`.
 */
export function ruleMatches(
  rule: PermissionRule,
  call: Pick<ToolCallItem, "name" | "arguments">,
  star: GlobStar = "wide",
): boolean {
  if (!globMatches(rule.tool, call.name)) return false;
  const patterns = Object.entries(rule.args ?? {});
  if (patterns.length === 0) return true;
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    return false;
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return false;
  return patterns.every(([key, pattern]) => {
    if (!Object.hasOwn(args as object, key)) return false;
    const value = (args as Record<string, unknown>)[key];
    return globMatches(pattern, typeof value === "string" ? value : JSON.stringify(value), star);
  });
}

/**
 * What `*` may stand for: `wide`, any run of characters (deny and ask rules: matching more is the
 * safe side); `narrow`, no shell control character (`; & | \` $ ( ) < >` or a line break), for
 * allow rules — so `git status*` never allows `git status; rm -rf ~`.
 */
export type GlobStar = "wide" | "narrow";

/** `*` a run of characters (see `GlobStar`), `?` one character, everything else literal; whole string. */
export function globMatches(pattern: string, text: string, star: GlobStar = "wide"): boolean {
  const any = star === "wide" ? "[\\s\\S]" : "[^;&|`$()<>\\r\\n]";
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, `${any}*`)
    .replace(/\?/g, any);
  return new RegExp(`^${source}$`).test(text);
}
