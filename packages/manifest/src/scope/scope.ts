import { isAbsolute } from "node:path";
import { ScopeError } from "../errors.js";
import { canonicalPath, isCovered } from "./canonical-path.js";

/** `"read" < "write"`. */
export type Permission = "read" | "write";

/** A canonical scope rule: `target` is absolute and has every symlink resolved. */
export interface ScopeRule {
  target: string;
  permission: Permission;
  recursive: boolean;
}

/** A rule as written: `target` may be relative (to `baseDir`) and `recursive` defaults to true. */
export interface ScopeRuleInput {
  target: string;
  permission: Permission;
  recursive?: boolean;
}

/** Why `Scope#check` refused a path. */
export type ScopeDenialReason =
  /** No allow rule covers the path. */
  | "not-allowed"
  /** Allow rules grant read only; write was asked for. */
  | "read-only"
  /** An allow rule grants enough, but a deny rule caps it (see `rule`). */
  | "denied-by-rule"
  /** The path does not exist yet and has `..` after the missing part. */
  | "parent-traversal"
  /** The path cannot be canonicalized (relative without a base, symlink loop, no permission to look). */
  | "unresolvable";

/** A refusal from `Scope#check`, with a message that can go straight to the model or the user. */
export interface ScopeDenial {
  ok: false;
  reason: ScopeDenialReason;
  /** Canonical path when it could be computed, else the path as given. */
  path: string;
  want: Permission;
  /** What the scope grants at `path` (null = nothing). */
  granted: Permission | null;
  /** The deny rule that capped the access, for `denied-by-rule`. */
  rule?: ScopeRule;
  message: string;
}

/** The outcome of `Scope#check`. */
export type ScopeCheck = { ok: true; path: string; granted: Permission } | ScopeDenial;

const RANK: Record<Permission, number> = { read: 1, write: 2 };

/**
 * The file-system boundary of a pod. Access at a path is the highest permission among
 * the allow rules covering its canonical form, capped by every covering deny rule (deny `read`
 * removes all access, deny `write` caps at read). Decisions are always made on the canonical
 * path, so a symlink can never reach further than its target would.
 */
export class Scope {
  readonly allow: readonly ScopeRule[];
  readonly deny: readonly ScopeRule[];
  /** Every allow target, in declaration order (deny rules ignored). */
  readonly readable: string[];
  /** Allow targets with write permission, in declaration order. */
  readonly writable: string[];
  /** `Readable:` / `Writable:` bullet lists for the system prompt; "" when nothing is allowed. */
  readonly summary: string;
  private readonly baseDir: string | undefined;

  private constructor(allow: ScopeRule[], deny: ScopeRule[], baseDir: string | undefined) {
    this.allow = Object.freeze(allow.map((rule) => Object.freeze({ ...rule })));
    this.deny = Object.freeze(deny.map((rule) => Object.freeze({ ...rule })));
    this.readable = allow.map((rule) => rule.target);
    this.writable = allow.filter((rule) => rule.permission === "write").map((rule) => rule.target);
    this.summary = scopeSummary(allow);
    this.baseDir = baseDir;
  }

  /**
   * Builds a scope, canonicalizing every target (relative ones against `baseDir`). Throws
   * `ScopeError` for a target that cannot be canonicalized. `baseDir` also anchors relative paths
   * later passed to `check`/`permissionAt`.
   */
  static async fromRules(
    allow: readonly (ScopeRule | ScopeRuleInput)[],
    deny: readonly (ScopeRule | ScopeRuleInput)[] = [],
    baseDir?: string,
  ): Promise<Scope> {
    const canonical = async (rule: ScopeRule | ScopeRuleInput): Promise<ScopeRule> => ({
      target: await canonicalTarget(rule.target, baseDir),
      permission: rule.permission,
      recursive: rule.recursive ?? true,
    });
    return new Scope(
      await Promise.all(allow.map(canonical)),
      await Promise.all(deny.map(canonical)),
      baseDir,
    );
  }

  /** The permission the scope grants at `path` (after canonicalization), or null for none. */
  async permissionAt(path: string): Promise<Permission | null> {
    const canonical = await this.canonical(path);
    return canonical.ok ? this.permissionAtCanonical(canonical.path) : null;
  }

  /**
   * The decision for a path that is already canonical (e.g. produced by `realpath` while walking
   * a directory tree), without touching the file system.
   */
  permissionAtCanonical(canonical: string): Permission | null {
    return this.decide(canonical).granted;
  }

  /** Whether `want` access is allowed at `path`; a denial says why, in words and as a reason code. */
  async check(path: string, want: Permission): Promise<ScopeCheck> {
    const canonical = await this.canonical(path);
    if (!canonical.ok) {
      return {
        ok: false,
        reason: canonical.problem,
        path,
        want,
        granted: null,
        message: `${want} access to "${path}" denied: ${canonical.detail}`,
      };
    }
    const decision = this.decide(canonical.path);
    if (decision.granted !== null && RANK[decision.granted] >= RANK[want]) {
      return { ok: true, path: canonical.path, granted: decision.granted };
    }
    const base = { ok: false as const, path: canonical.path, want, granted: decision.granted };
    if (decision.allowed === null) {
      return {
        ...base,
        reason: "not-allowed",
        message: `${want} access to "${canonical.path}" denied: outside the scope`,
      };
    }
    if (RANK[decision.allowed] < RANK[want]) {
      return {
        ...base,
        reason: "read-only",
        message: `write access to "${canonical.path}" denied: the scope allows read only`,
      };
    }
    const rule = decision.cappedBy as ScopeRule;
    return {
      ...base,
      reason: "denied-by-rule",
      rule,
      message: `${want} access to "${canonical.path}" denied by the deny rule on "${rule.target}" (${rule.permission})`,
    };
  }

  private async canonical(path: string) {
    if (isAbsolute(path)) return canonicalPath(path);
    if (this.baseDir === undefined) {
      return {
        ok: false as const,
        problem: "unresolvable" as const,
        detail: "relative path and no base directory",
      };
    }
    return canonicalPath(`${this.baseDir}/${path}`);
  }

  private decide(canonical: string): {
    allowed: Permission | null;
    granted: Permission | null;
    cappedBy?: ScopeRule;
  } {
    let allowed: Permission | null = null;
    for (const rule of this.allow) {
      if (!isCovered(canonical, rule.target, rule.recursive)) continue;
      if (allowed === null || RANK[rule.permission] > RANK[allowed]) allowed = rule.permission;
    }
    let granted = allowed;
    let cappedBy: ScopeRule | undefined;
    for (const rule of this.deny) {
      if (granted === null) break;
      if (!isCovered(canonical, rule.target, rule.recursive)) continue;
      const cap: Permission | null = rule.permission === "read" ? null : "read";
      if (cap === null || RANK[cap] < RANK[granted]) {
        granted = cap;
        cappedBy = rule;
      }
    }
    return cappedBy ? { allowed, granted, cappedBy } : { allowed, granted };
  }
}

/**
 * The summary: `Readable:` and one `  - <path>` line per allow rule, then `Writable:` and one
 * line per write rule, ` [non-recursive]` after non-recursive rules, empty sections left out,
 * no trailing newline.
 */
export function scopeSummary(allow: readonly ScopeRule[]): string {
  const line = (rule: ScopeRule) => `  - ${rule.target}${rule.recursive ? "" : " [non-recursive]"}`;
  const sections: string[] = [];
  if (allow.length > 0) sections.push(["Readable:", ...allow.map(line)].join("\n"));
  const writable = allow.filter((rule) => rule.permission === "write");
  if (writable.length > 0) sections.push(["Writable:", ...writable.map(line)].join("\n"));
  return sections.join("\n");
}

async function canonicalTarget(target: string, baseDir: string | undefined): Promise<string> {
  if (!isAbsolute(target) && baseDir === undefined) {
    throw new ScopeError(`scope target "${target}" is relative and no base directory was given`, {
      target,
      problem: "relative-without-base",
      hint: "pass an absolute target or the directory relative targets are relative to",
    });
  }
  const result = await canonicalPath(isAbsolute(target) ? target : `${baseDir}/${target}`);
  if (result.ok) return result.path;
  throw new ScopeError(`scope target "${target}" cannot be used: ${result.detail}`, {
    target,
    problem: result.problem,
    hint:
      result.problem === "parent-traversal"
        ? 'write the target without ".." after the part that does not exist yet'
        : "point the target at a path that can be resolved",
  });
}
