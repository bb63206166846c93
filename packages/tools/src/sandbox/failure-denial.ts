import { lstat } from "node:fs/promises";
import { dirname, isAbsolute } from "node:path";
import type { ToolDenial } from "@podkit/llm-worker";
import type { Scope, ScopeDenial } from "@podkit/manifest";
import type { PodkitFiles } from "../containment/podkit-files.js";
import {
  notWritableRule,
  OUTSIDE_SCOPE_RULE,
  PODKIT_FILES_RULE,
  scopeDenialRule,
  workspacePath,
} from "../containment/rule-text.js";
import type { RefusedConnection } from "./network/filtering-proxy.js";

/** What the sandbox of one process was: the policy its mount plan came from, and where it ran. */
export interface SandboxedRun {
  readonly scope: Scope;
  readonly podkitFiles: PodkitFiles;
  /** `[sandbox.network] allow`. */
  readonly networkAllow: readonly string[];
  /** The process's working directory: what relative paths in its output are relative to. */
  readonly cwd: string;
  /** The workspace: rules and paths are shown relative to it. */
  readonly workspace: string;
}

/** The denial of connections the proxy refused: the first names the rule, the reason lists them all. */
export function networkDenial(refused: readonly RefusedConnection[], allow: readonly string[]): ToolDenial {
  const first = refused[0] as RefusedConnection;
  const named = [...new Set(refused.map((c) => `${c.host}:${c.port}`))];
  const shown =
    named.length > 5 ? `${named.slice(0, 5).join(", ")} and ${named.length - 5} more` : named.join(", ");
  return {
    by: "sandbox",
    rule: `network: ${first.host}:${first.port} not in [sandbox.network] allow`,
    reason: `the sandbox's network proxy refused ${named.length === 1 ? "a connection" : "connections"} to ${shown} (allowed: ${allow.join(", ") || "none"})`,
  };
}

/** How a failed file operation reads in a program's error output, by what the mount plan does. */
type FileError = "unreadable" | "read-only" | "absent";

/** Error text of the kernel's errno, as coreutils, shells, Python and Node print it. */
const FILE_ERRORS: readonly (readonly [RegExp, FileError])[] = [
  [/Read-only file system|\bEROFS\b|\[Errno 30\]/i, "read-only"],
  // A hidden path is a mode-0 placeholder (EACCES) that cannot be removed or replaced (EBUSY).
  [/Permission denied|\bEACCES\b|\[Errno 13\]|Device or resource busy|\bEBUSY\b|\[Errno 16\]/i, "unreadable"],
  [/No such file or directory|\bENOENT\b|\[Errno 2\]/i, "absent"],
];

/** Signs of a process that found no network (curl, wget, git, Python, Node, pip, npm). */
const NO_NETWORK: readonly RegExp[] = [
  /Could not resolve host:?\s*([^\s;,'"]+)/i,
  /Failed to connect to (\S+) port (\d+)/i,
  /unable to resolve host address\s*['‘"]?([^'’"\s]+)/i,
  /getaddrinfo \w+ ([^\s;,'"]+)/i,
  /Temporary failure in name resolution|Name or service not known|Network is unreachable|No address associated with hostname|\bENETUNREACH\b|\bEAI_AGAIN\b/i,
];

const NOT_WRITABLE = notWritableRule("");

/** Mounts every sandbox makes for itself, whatever the scope says. */
const SANDBOX_OWN = ["/proc", "/dev"];

/** Bounds on the work: lines read, paths checked against the scope. */
const MAX_LINES = 2000;
const MAX_PATH_CHECKS = 40;
const MAX_QUOTED_LINE = 300;

/**
 * Best effort: the containment rule behind a sandboxed process's failure, read from its output
 * (docs/sandbox.md, "What gets reported"). A line with a file error (EACCES, EROFS, EBUSY, ENOENT)
 * counts only when a path it names is one the mount plan made so: hidden by a deny rule, read-only
 * (a read rule, a `permission = "write"` deny rule, podkit's own files), or absent because the
 * scope does not show it although the host has it. The path is judged by the scope, the same
 * decision the mount plan was computed from. Without a network allow list, a line saying a host
 * could not be resolved or reached counts as the sandbox's lack of network. The containment never
 * depends on this: it only names, for the log, what already failed.
 */
export async function failureDenial(output: string, run: SandboxedRun): Promise<ToolDenial | undefined> {
  let checks = 0;
  for (const line of output.split("\n", MAX_LINES)) {
    const error = FILE_ERRORS.find(([sign]) => sign.test(line))?.[1];
    if (error !== undefined) {
      // A line may name several paths (the program, a source and a target): the most specific rule wins.
      let best: { denial: ToolDenial; rank: number } | undefined;
      for (const path of pathsIn(line)) {
        if (checks++ >= MAX_PATH_CHECKS) break;
        const found = await fileDenial(path, error, line, run);
        if (found !== undefined && (best === undefined || found.rank > best.rank)) best = found;
      }
      if (best !== undefined) return best.denial;
    }
    if (run.networkAllow.length === 0) {
      const denial = noNetworkDenial(line);
      if (denial !== undefined) return denial;
    }
  }
  return undefined;
}

/** How specific a rule is: a deny rule or podkit's own files, then a read-only path, then the scope's edge. */
function rankOf(rule: string): number {
  if (rule === OUTSIDE_SCOPE_RULE) return 1;
  return rule.startsWith(NOT_WRITABLE) ? 2 : 3;
}

async function fileDenial(
  given: string,
  error: FileError,
  line: string,
  run: SandboxedRun,
): Promise<{ denial: ToolDenial; rank: number } | undefined> {
  const absolute = isAbsolute(given) ? given : `${run.cwd}/${given}`;
  // The sandbox's own /proc and /dev are not the scope's doing.
  if (SANDBOX_OWN.some((dir) => absolute === dir || absolute.startsWith(`${dir}/`))) return undefined;
  const said = quoteLine(line);
  const deny = (rule: string | undefined, what: string) =>
    rule === undefined
      ? undefined
      : {
          denial: { by: "sandbox" as const, rule, reason: `${what}; the process reported: ${said}` },
          rank: rankOf(rule),
        };
  const read = await run.scope.check(absolute, "read");
  const shown = workspacePath(run.workspace, read.path);
  const podkit = () =>
    deny(PODKIT_FILES_RULE, `"${shown}" is one of podkit's own files, read-only in the sandbox`);
  if (error === "read-only") {
    if (run.podkitFiles.contains(read.path)) return podkit();
    const write = await run.scope.check(absolute, "write");
    return write.ok
      ? undefined
      : deny(ruleOf(write, run.workspace), `"${shown}" is not writable in the sandbox`);
  }
  if (error === "unreadable") {
    if (!read.ok) {
      // Outside the scope, a path is hidden only where the plan masks it, and only if it exists.
      if (read.reason === "not-allowed" && !(await existsOnHost(read.path))) return undefined;
      return deny(ruleOf(read, run.workspace), `"${shown}" is hidden by the sandbox`);
    }
    // Readable, yet refused: a mount point, which cannot be removed or replaced (EBUSY).
    if (!/busy|EBUSY|Errno 16/i.test(line)) return undefined;
    if (run.podkitFiles.contains(read.path)) return podkit();
    const write = await run.scope.check(absolute, "write");
    if (write.ok || write.reason !== "denied-by-rule") return undefined;
    return deny(ruleOf(write, run.workspace), `"${shown}" is read-only in the sandbox`);
  }
  // Absent inside, present on the host (the path, or the directory it would be made in).
  if (read.ok || !((await existsOnHost(read.path)) || (await existsOnHost(dirname(read.path)))))
    return undefined;
  return deny(ruleOf(read, run.workspace), `"${shown}" exists on the host but the sandbox does not show it`);
}

/** The rule the scope's refusal names (the file tools' words); none for what the mount plan has no rule for. */
function ruleOf(check: ScopeDenial, workspace: string): string | undefined {
  return check.reason === "parent-traversal" ? undefined : scopeDenialRule(check, workspace);
}

function noNetworkDenial(line: string): ToolDenial | undefined {
  for (const sign of NO_NETWORK) {
    const match = sign.exec(line);
    if (match === null) continue;
    const host =
      match[1] === undefined ? undefined : match[2] === undefined ? match[1] : `${match[1]}:${match[2]}`;
    return {
      by: "sandbox",
      rule:
        host === undefined
          ? "network: [sandbox.network] allow is empty"
          : `network: ${host} not in [sandbox.network] allow`,
      reason: `the sandbox has no network ([sandbox.network] allow is empty); the process reported: ${quoteLine(line)}`,
    };
  }
  return undefined;
}

/**
 * The paths a line of error output may name: quoted text ('…', "…", ‘…’, `…'), and the
 * space-free fields between `: ` or `, ` separators (`cat: .env: Permission denied`) after the
 * first, which names the program (`cat`, `/bin/bash`) or the error (`PermissionError`).
 */
function pathsIn(line: string): string[] {
  const found = new Set<string>();
  for (const match of line.matchAll(/'([^']+)'|"([^"]+)"|‘([^’]+)’|`([^`']+)'/g)) {
    const text = match[1] ?? match[2] ?? match[3] ?? match[4];
    if (text !== undefined) found.add(text);
  }
  for (const field of line.split(/:\s+|,\s+/).slice(1)) {
    const text = field.trim();
    if (text !== "" && !/\s/.test(text)) found.add(text);
  }
  return [...found].filter(
    (text) => text.length < 4096 && !text.includes("\0") && !text.startsWith("~") && !/^\[?Errno/.test(text),
  );
}

async function existsOnHost(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

function quoteLine(line: string): string {
  const text = line.trim();
  return text.length > MAX_QUOTED_LINE ? `${text.slice(0, MAX_QUOTED_LINE)}…` : text;
}
