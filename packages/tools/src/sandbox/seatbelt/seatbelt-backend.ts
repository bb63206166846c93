import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BackendProbe, NetworkBridge, SandboxBackend, SandboxPolicy } from "../backend.js";
import { proxyEnvironment } from "../network/proxy-environment.js";
import { runBriefly } from "../run-briefly.js";
import type { SandboxCommand } from "../sandbox.js";
import { seatbeltProfile } from "./seatbelt-profile.js";

const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

/**
 * The macOS backend: `sandbox-exec -p <profile>` with the profile `seatbeltProfile` writes for the
 * policy, a private temporary directory as `TMPDIR`, and the host-side proxy on a loopback port
 * when hosts are allowed. Written and unit-tested here but not run: no Mac is available to this
 * repository's CI (docs/sandbox.md). The probe runs a trivial command under the real profile, so a
 * profile macOS refuses fails the probe — and with `fail_if_unavailable`, the pod's start.
 */
export class SeatbeltBackend implements SandboxBackend {
  readonly name = "seatbelt";
  readonly contains = true;
  private temp: Promise<string> | undefined;

  async probe(policy: SandboxPolicy, signal?: AbortSignal): Promise<BackendProbe> {
    const version = await runBriefly("/usr/bin/sw_vers", ["-productVersion"], {
      timeoutMs: 5000,
      ...(signal ? { signal } : {}),
    });
    const macos = version.code === 0 ? version.stdout.trim() : null;
    const trial = await this.wrap({ file: "/usr/bin/true", args: [], cwd: "/", env: {} }, policy, undefined);
    const ran = await runBriefly(trial.file, trial.args, {
      env: trial.env,
      timeoutMs: 10_000,
      ...(signal ? { signal } : {}),
    });
    if (ran.code !== 0) {
      const said = ran.stderr.trim() || ran.failure || `exit code ${ran.code}`;
      return { ok: false, version: macos, problem: `a trial command inside sandbox-exec failed: ${said}` };
    }
    return { ok: true, version: macos, degraded: [] };
  }

  async wrap(
    command: SandboxCommand,
    policy: SandboxPolicy,
    network: NetworkBridge | undefined,
  ): Promise<SandboxCommand> {
    const temp = await this.privateTemp();
    const profile = seatbeltProfile(policy, {
      tmpDirs: [temp],
      ...(network?.tcpPort === undefined ? {} : { proxyPort: network.tcpPort }),
    });
    let env: Record<string, string> = { ...command.env, TMPDIR: temp };
    if (network?.tcpPort !== undefined) env = proxyEnvironment(env, `http://127.0.0.1:${network.tcpPort}`);
    return {
      file: SANDBOX_EXEC,
      args: ["-p", profile, command.file, ...command.args],
      cwd: command.cwd,
      env,
    };
  }

  async close(): Promise<void> {
    const temp = await this.temp?.catch(() => undefined);
    this.temp = undefined;
    if (temp !== undefined) await rm(temp, { recursive: true, force: true });
  }

  private privateTemp(): Promise<string> {
    // Canonical: Seatbelt matches real paths (/var is /private/var).
    this.temp ??= mkdtemp(join(tmpdir(), "podkit-sandbox-tmp-")).then((dir) => realpath(dir));
    return this.temp;
  }
}
