import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BackendProbe, NetworkBridge, SandboxBackend, SandboxPolicy } from "../backend.js";
import { findProgram } from "../find-program.js";
import { proxyEnvironment } from "../network/proxy-environment.js";
import { runBriefly } from "../run-briefly.js";
import type { SandboxCommand } from "../sandbox.js";
import {
  isInside,
  type MountStep,
  planMounts,
  SYSTEM_DIRS,
  type SystemMounts,
  systemMounts,
} from "./mount-plan.js";

/**
 * Namespaces and process rules of every sandbox: a new user, pid, ipc, uts, cgroup and network
 * namespace (no network but its own loopback), no capabilities (root inside cannot undo a mount),
 * no nested user namespaces, a new session (no terminal injection through TIOCSTI), and death
 * with the parent — with the pid namespace, nothing the command starts outlives it.
 */
const BASE_ARGS = [
  "--unshare-user",
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-uts",
  "--unshare-cgroup-try",
  "--unshare-net",
  "--disable-userns",
  "--cap-drop",
  "ALL",
  "--new-session",
  "--die-with-parent",
] as const;

/** Where the proxy's socket appears inside the sandbox, and the loopback port its relay listens on. */
const INNER_SOCKET = "/run/podkit/proxy.sock";
const RELAY_PORT = 3128;

/**
 * Starts a relay from the sandbox's loopback to the proxy socket, waits (at most ~1 s) until it
 * listens — `/proc/net/tcp` lists 127.0.0.1:3128 (0100007F:0C38) in state LISTEN (0A) — and then
 * runs the command in its place. The relay dies with the sandbox's pid namespace.
 */
const RELAY_SCRIPT = [
  `"$PODKIT_SOCAT" TCP-LISTEN:${RELAY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${INNER_SOCKET} >/dev/null 2>&1 &`,
  "i=0",
  `while [ "$i" -lt 200 ] && ! grep -q ' 0100007F:${RELAY_PORT.toString(16).toUpperCase().padStart(4, "0")} 00000000:0000 0A' /proc/net/tcp 2>/dev/null; do i=$((i+1)); sleep 0.005; done`,
  "unset PODKIT_SOCAT",
  'exec "$@"',
].join("\n");

/**
 * The Linux backend: bubblewrap, called directly (docs/sandbox.md says why not through
 * `@anthropic-ai/sandbox-runtime`). Every command gets a fresh sandbox whose file system is the
 * mount plan of the pod's policy (`planMounts`), whose network is none, or the host-side proxy
 * reached through a relay on the sandbox's loopback when the manifest allows hosts.
 */
export class BwrapBackend implements SandboxBackend {
  readonly name = "bwrap";
  readonly contains = true;
  private placeholders: Promise<{ root: string; file: string; dir: string }> | undefined;
  private programs: Promise<{ bwrap: string | undefined; socat: string | undefined }> | undefined;
  private system: Promise<SystemMounts> | undefined;

  /** `path` is the pod's `PATH`, where `program` (default `bwrap`) and `socat` are looked for. */
  constructor(
    private readonly path: string | undefined,
    private readonly program = "bwrap",
  ) {}

  async probe(policy: SandboxPolicy, signal?: AbortSignal): Promise<BackendProbe> {
    const { bwrap, socat } = await this.findPrograms();
    if (bwrap === undefined) {
      return {
        ok: false,
        version: null,
        problem: `bubblewrap (${this.program}) was not found on PATH (${this.path ?? "unset: the default system path"})`,
      };
    }
    const asked = await runBriefly(bwrap, ["--version"], { timeoutMs: 5000, ...(signal ? { signal } : {}) });
    const version = /bubblewrap\s+(\S+)/.exec(asked.stdout)?.[1] ?? null;
    if (asked.code !== 0 || version === null) {
      return { ok: false, version, problem: `${bwrap} --version failed: ${describe(asked)}` };
    }
    const trial = await this.wrap(
      { file: "true", args: [], cwd: "/", env: { PATH: "/usr/bin:/bin" } },
      policy,
      undefined,
    );
    const ran = await runBriefly(trial.file, trial.args, {
      env: trial.env,
      timeoutMs: 10_000,
      ...(signal ? { signal } : {}),
    });
    if (ran.code !== 0) {
      return {
        ok: false,
        version,
        problem: `a trial command inside bubblewrap ${version} failed (${describe(ran)}); user namespaces may be disabled on this host`,
      };
    }
    const degraded: string[] = [];
    if (policy.networkAllow.length > 0 && socat === undefined) {
      degraded.push(
        `socat was not found on PATH, so the allowed hosts (${policy.networkAllow.join(", ")}) cannot be reached: processes have no network`,
      );
    }
    return { ok: true, version, degraded };
  }

  async wrap(
    command: SandboxCommand,
    policy: SandboxPolicy,
    network: NetworkBridge | undefined,
  ): Promise<SandboxCommand> {
    const { bwrap, socat } = await this.findPrograms();
    if (bwrap === undefined)
      throw new Error(`internal: ${this.program} was not found; the probe should have said so`);
    this.system ??= systemMounts(SYSTEM_DIRS);
    const steps = await planMounts(policy, this.system);
    const hidden = await this.hiddenPlaceholders();
    const args: string[] = [...BASE_ARGS];
    for (const step of steps) args.push(...stepArgs(step, hidden));
    if (!reachable(command.cwd, steps)) args.push("--dir", command.cwd);
    let env: Record<string, string> = { ...command.env, TMPDIR: "/tmp" };
    let inner = [command.file, ...command.args];
    if (network?.socketPath !== undefined && socat !== undefined) {
      args.push("--ro-bind", network.socketPath, INNER_SOCKET);
      if (!SYSTEM_DIRS.some((dir) => isInside(socat, dir))) args.push("--ro-bind", socat, socat);
      env = { ...proxyEnvironment(env, `http://127.0.0.1:${RELAY_PORT}`), PODKIT_SOCAT: socat };
      inner = ["/bin/sh", "-c", RELAY_SCRIPT, "podkit-sandbox", ...inner];
    }
    args.push("--remount-ro", "/", "--chdir", command.cwd, "--", ...inner);
    return { file: bwrap, args, cwd: command.cwd, env };
  }

  async close(): Promise<void> {
    const made = this.placeholders;
    this.placeholders = undefined;
    const root = await made?.then(
      (p) => p.root,
      () => undefined,
    );
    if (root !== undefined) {
      // The placeholders are mode 0 so that nothing inside can read them; give them back first.
      await chmod(join(root, "hidden-dir"), 0o700).catch(() => {});
      await rm(root, { recursive: true, force: true });
    }
  }

  private findPrograms() {
    this.programs ??= (async () => ({
      bwrap: await findProgram(this.program, this.path),
      socat: await findProgram("socat", this.path),
    }))();
    return this.programs;
  }

  /** An empty file and an empty directory, both mode 0 and bound read-only: what hides a denied path. */
  private hiddenPlaceholders() {
    this.placeholders ??= (async () => {
      const root = await mkdtemp(join(tmpdir(), "podkit-sandbox-"));
      const file = join(root, "hidden-file");
      const dir = join(root, "hidden-dir");
      await writeFile(file, "", { mode: 0 });
      await mkdir(dir, { mode: 0 });
      await chmod(file, 0);
      await chmod(dir, 0);
      return { root, file, dir };
    })();
    return this.placeholders;
  }
}

function stepArgs(step: MountStep, hidden: { file: string; dir: string }): string[] {
  switch (step.op) {
    case "bind":
      return ["--bind", step.path, step.path];
    case "ro-bind":
      return ["--ro-bind", step.path, step.path];
    case "symlink":
      return ["--symlink", step.target, step.path];
    case "tmpfs":
      return ["--tmpfs", step.path];
    case "proc":
      return ["--proc", step.path];
    case "dev":
      return ["--dev", step.path];
    case "mask":
      return ["--ro-bind", step.kind === "dir" ? hidden.dir : hidden.file, step.path];
  }
}

/** True when `cwd` exists inside the sandbox: under a mount, or a parent bubblewrap makes for one. */
function reachable(cwd: string, steps: readonly MountStep[]): boolean {
  return steps.some(
    (step) =>
      step.op !== "mask" && step.op !== "symlink" && (isInside(cwd, step.path) || isInside(step.path, cwd)),
  );
}

function describe(run: { code: number | null; stderr: string; failure?: string }): string {
  const said = run.stderr.trim().split("\n").slice(-3).join(" / ");
  return [run.failure, run.code === null ? undefined : `exit code ${run.code}`, said || undefined]
    .filter(Boolean)
    .join(": ");
}
