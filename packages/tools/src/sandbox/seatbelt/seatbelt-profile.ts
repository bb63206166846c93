import type { SandboxPolicy } from "../backend.js";

/**
 * System locations a program needs on macOS, readable in every sandbox (binaries, libraries,
 * frameworks, the dyld cache, `/etc` which is `/private/etc`). A home directory is not among them.
 */
export const MACOS_SYSTEM_READ = [
  "/usr",
  "/bin",
  "/sbin",
  "/System",
  "/Library",
  "/Applications",
  "/opt/homebrew",
  "/private/etc",
  "/private/var/db/dyld",
  "/private/var/select",
  "/dev",
] as const;

/** A string as SBPL (a Scheme dialect) reads it: backslashes and quotes escaped. */
export function sbplString(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** A regex matching exactly the direct children of `dir` (what a non-recursive rule covers below it). */
function childrenRegex(dir: string): string {
  const escaped = dir.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return `#"^${escaped.replace(/"/g, '\\"')}/[^/]+$"`;
}

/** The SBPL filters covering a scope target as the rule does: its subtree, or itself and its children. */
function filtersOf(target: string, recursive: boolean): string[] {
  if (recursive) return [`(subpath ${sbplString(target)})`];
  return [`(literal ${sbplString(target)})`, `(regex ${childrenRegex(target)})`];
}

/**
 * The Seatbelt (`sandbox-exec`) profile of a policy, the macOS counterpart of the bubblewrap mount
 * plan. Everything is denied, then: processes may run, fork and signal each other inside the
 * sandbox; the system locations and every allow target of the scope are readable; write targets
 * (and the sandbox's private temporary directory, `tmpDirs`) are writable; every deny rule then takes back what it denies —
 * in SBPL the last matching rule wins, so the denials come after the grants — and podkit's own
 * directories are never writable. The network is refused, except the loopback port of the
 * host-side proxy when `[sandbox.network] allow` names hosts (`proxyPort`). Untested on a Mac in
 * this repository (docs/sandbox.md); `test/sandbox/seatbelt-profile.test.ts` pins its text.
 */
export function seatbeltProfile(
  policy: SandboxPolicy,
  options: { proxyPort?: number; tmpDirs?: readonly string[] } = {},
): string {
  const { scope } = policy;
  const lines = [
    "(version 1)",
    "(deny default)",
    "(allow process-exec process-fork)",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow mach-lookup)",
    "(allow ipc-posix-shm ipc-posix-sem)",
    "(allow pseudo-tty)",
    "(allow file-read-metadata)",
    `(allow file-read* ${MACOS_SYSTEM_READ.map((dir) => `(subpath ${sbplString(dir)})`).join(" ")})`,
    '(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))',
    '(allow file-ioctl (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))',
  ];
  const tmp = options.tmpDirs ?? [];
  if (tmp.length > 0)
    lines.push(
      `(allow file-read* file-write* ${tmp.map((dir) => `(subpath ${sbplString(dir)})`).join(" ")})`,
    );
  for (const rule of scope.allow) {
    const filters = filtersOf(rule.target, rule.recursive).join(" ");
    lines.push(`(allow file-read* ${filters})`);
    if (rule.permission === "write") lines.push(`(allow file-write* ${filters})`);
  }
  for (const rule of scope.deny) {
    const filters = filtersOf(rule.target, rule.recursive).join(" ");
    lines.push(
      rule.permission === "read"
        ? `(deny file-read* file-write* ${filters})`
        : `(deny file-write* ${filters})`,
    );
  }
  for (const path of policy.protectedPaths) lines.push(`(deny file-write* (subpath ${sbplString(path)}))`);
  lines.push("(deny network*)");
  if (options.proxyPort !== undefined) {
    lines.push(`(allow network-outbound (remote ip "localhost:${options.proxyPort}"))`);
  }
  return `${lines.join("\n")}\n`;
}
