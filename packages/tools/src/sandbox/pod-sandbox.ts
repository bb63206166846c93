import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolDenial } from "@podkit/llm-worker";
import type { SandboxConfig, Scope } from "@podkit/manifest";
import { PodkitFiles } from "../containment/podkit-files.js";
import { ESCALATION_LOANED_RULE, ESCALATION_NOT_APPROVED_RULE } from "../containment/rule-text.js";
import type { ToolWarningSink } from "../package/tool-package.js";
import type { SandboxBackend, SandboxPolicy } from "./backend.js";
import { BwrapBackend } from "./bwrap/bwrap-backend.js";
import { SandboxUnavailableError } from "./errors.js";
import { failureDenial, networkDenial } from "./failure-denial.js";
import { FilteringProxy, type ProxyEntrance } from "./network/filtering-proxy.js";
import { HostAllowList } from "./network/host-allow.js";
import { NoneBackend, NoOsBackend } from "./none-backend.js";
import type {
  EscalationOutcome,
  SandboxCommand,
  SandboxProbe,
  SandboxSpawnOptions,
  ToolSandbox,
  WrappedCommand,
} from "./sandbox.js";
import { SeatbeltBackend } from "./seatbelt/seatbelt-backend.js";

/** What `createSandbox` builds a pod's sandbox from. */
export interface CreateSandboxOptions {
  /** The manifest's `[sandbox]`. */
  readonly config: SandboxConfig;
  /** The pod's scope (a sub-pod's is its loan): the sandbox's file rules. */
  readonly scope: Scope;
  /** The workspace: where commands run unless told otherwise. */
  readonly workspace: string;
  /** podkit's own directories (`.podkit/`, the session directory, the user config dir): never writable inside. */
  readonly protectedPaths?: readonly string[];
  /** The pod's environment: `PATH` (where bubblewrap and socat are looked for) and `HOME`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where a sandbox that cannot run, or runs with less than asked, is reported. */
  readonly warn: ToolWarningSink;
  /** The manifest file that set `fail_if_unavailable`, named by `SandboxUnavailableError`. */
  readonly configuredIn?: string;
  /** Default `process.platform`. */
  readonly platform?: NodeJS.Platform;
  /** Another backend (a container, a remote runner): the seam `[sandbox] backend` values beyond `os` plug into. */
  readonly backend?: SandboxBackend;
  /**
   * The pod is a sub-pod: its scope and `[sandbox]` are a loan from its parent (`lendSandbox`), so
   * no call may ever leave the sandbox, approved or not (authority only narrows).
   */
  readonly loaned?: boolean;
}

/** The warning source of the sandbox. */
const SOURCE = "sandbox";

function backendFor(options: CreateSandboxOptions): SandboxBackend {
  if (options.backend !== undefined) return options.backend;
  if (options.config.backend === "none") return new NoneBackend();
  const platform = options.platform ?? process.platform;
  if (platform === "linux") return new BwrapBackend(options.env.PATH);
  if (platform === "darwin") return new SeatbeltBackend();
  return new NoOsBackend(platform);
}

/**
 * A pod's sandbox: one backend, one policy derived from the manifest, one probe. The probe runs at
 * most once (at pod start when the pod can start processes, else at the first `wrap`); what it
 * found is `probed`, the payload of the pod's `sandbox.probe` log entry. A sandbox that cannot run
 * refuses every `wrap` with `SandboxUnavailableError` when `fail_if_unavailable` is on, and
 * otherwise lets commands run unconfined after one `sandbox.unavailable` warning: never silently.
 * A command leaves it only through `escalate`, for a call the pod approved (`approveEscalation`),
 * and never in a sub-pod (`loaned`).
 */
export class PodSandbox implements ToolSandbox {
  private readonly backend: SandboxBackend;
  private readonly policy: SandboxPolicy;
  private probing: Promise<SandboxProbe> | undefined;
  private problem: string | undefined;
  private proxy: Promise<{ proxy: FilteringProxy; dir: string | undefined }> | undefined;
  private entrances = 0;
  private podkitFiles: Promise<PodkitFiles> | undefined;
  /** Calls the pod approved to run outside the sandbox, each usable once. */
  private readonly approved = new Set<string>();
  private closed = false;
  /** What the probe found, once it ran. */
  probed: SandboxProbe | undefined;

  constructor(private readonly options: CreateSandboxOptions) {
    this.backend = backendFor(options);
    this.policy = {
      scope: options.scope,
      protectedPaths: [...new Set(options.protectedPaths ?? [])],
      networkAllow: options.config.network.allow,
      home: options.env.HOME,
    };
  }

  /** The backend's name: `bwrap`, `seatbelt`, `none`, … */
  get backendName(): string {
    return this.backend.name;
  }

  get escalation(): "on-approval" | "never" {
    return this.options.loaned === true ? "never" : "on-approval";
  }

  /**
   * Lets the call `callId` run its command outside the sandbox, once: what the pod calls after a
   * person allowed it (an `ask` approval naming the reason, written to the session log). Has no
   * effect on a sub-pod's sandbox, which refuses every escalation.
   */
  approveEscalation(callId: string): void {
    if (this.options.loaned !== true) this.approved.add(callId);
  }

  async escalate(command: SandboxCommand, callId: string): Promise<EscalationOutcome> {
    if (this.closed) throw new Error("the pod's sandbox is closed; no process can start in it");
    const refuse = (rule: string, reason: string): EscalationOutcome => ({
      ok: false,
      denied: { by: "sandbox", rule, reason },
    });
    if (this.options.loaned === true) {
      return refuse(
        ESCALATION_LOANED_RULE,
        "a sub-pod's sandbox is lent by its parent and never lets a command run outside it",
      );
    }
    if (!this.approved.delete(callId)) {
      return refuse(
        ESCALATION_NOT_APPROVED_RULE,
        `escalation needs an approval: call ${callId} was not approved to run outside the sandbox`,
      );
    }
    return { ok: true, command: unconfined(command) };
  }

  /** Probes the backend once (later calls share the first); reports a degraded sandbox as warnings. */
  probe(signal?: AbortSignal): Promise<SandboxProbe> {
    this.probing ??= this.runProbe(signal);
    return this.probing;
  }

  /** The probe, and `SandboxUnavailableError` when the sandbox cannot run and that is fatal. */
  async ensureAvailable(signal?: AbortSignal): Promise<SandboxProbe> {
    const probe = await this.probe(signal);
    if (this.problem !== undefined && this.options.config.fail_if_unavailable) {
      throw new SandboxUnavailableError({
        backend: this.backend.name,
        problem: this.problem,
        ...(this.options.configuredIn === undefined ? {} : { file: this.options.configuredIn }),
      });
    }
    return probe;
  }

  async wrap(command: SandboxCommand): Promise<WrappedCommand> {
    // After close the placeholders and the proxy are gone: nothing may start any more.
    if (this.closed) throw new Error("the pod's sandbox is closed; no process can start in it");
    const probe = await this.ensureAvailable();
    if (!probe.active) return unconfined(command);
    const entrance = this.policy.networkAllow.length > 0 ? await this.entrance() : undefined;
    let wrapped: SandboxCommand;
    try {
      const bridge = entrance && { socketPath: entrance.socketPath, tcpPort: entrance.port };
      wrapped = await this.backend.wrap(command, this.policy, bridge);
    } catch (error) {
      await entrance?.close();
      throw error;
    }
    const refused = entrance?.refused ?? [];
    return {
      ...wrapped,
      sandboxed: true,
      refusals: () => refused.length,
      denial: async (output, { failed = false, since = 0 } = {}): Promise<ToolDenial | undefined> => {
        const mine = refused.slice(since);
        if (mine.length > 0) return networkDenial(mine, this.policy.networkAllow);
        if (!failed) return undefined;
        this.podkitFiles ??= PodkitFiles.of(this.policy.protectedPaths);
        return failureDenial(output, {
          scope: this.policy.scope,
          podkitFiles: await this.podkitFiles,
          networkAllow: this.policy.networkAllow,
          cwd: command.cwd,
          workspace: this.options.workspace,
        });
      },
      release: async () => entrance?.close(),
    };
  }

  async spawn(file: string, args: readonly string[], options: SandboxSpawnOptions = {}) {
    const { cwd, env, ...rest } = options;
    const wrapped = await this.wrap({ file, args, cwd: cwd ?? this.options.workspace, env: env ?? {} });
    const child = spawn(wrapped.file, [...wrapped.args], {
      ...rest,
      cwd: wrapped.cwd,
      env: { ...wrapped.env },
    });
    child.once("close", () => void wrapped.release());
    child.once("error", () => void wrapped.release());
    return child;
  }

  /** Stops the proxy and removes the backend's placeholders. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const running = await this.proxy?.catch(() => undefined);
    this.proxy = undefined;
    await running?.proxy.close();
    if (running?.dir !== undefined) await rm(running.dir, { recursive: true, force: true });
    await this.backend.close();
  }

  private async runProbe(signal: AbortSignal | undefined): Promise<SandboxProbe> {
    const network = [...this.policy.networkAllow];
    const found = await this.backend.probe(this.policy, signal);
    let probe: SandboxProbe;
    if (found.ok) {
      probe = {
        backend: this.backend.name,
        version: found.version,
        active: this.backend.contains,
        network,
        degraded: [...found.degraded],
      };
      for (const message of found.degraded)
        this.options.warn({ code: "sandbox.degraded", message, source: SOURCE });
    } else {
      this.problem = found.problem;
      probe = {
        backend: this.backend.name,
        version: found.version,
        active: false,
        network,
        degraded: [`${found.problem}: processes run without a sandbox`],
      };
      if (!this.options.config.fail_if_unavailable) {
        this.options.warn({
          code: "sandbox.unavailable",
          message: `the OS sandbox cannot run (${found.problem}); with [sandbox] fail_if_unavailable = false, the processes this pod starts run without one, with the user's full authority`,
          source: SOURCE,
        });
      }
    }
    this.probed = probe;
    return probe;
  }

  /**
   * A fresh entrance to the host-side proxy for one process, so what the proxy refuses is known to
   * be that process's doing: a unix socket for bubblewrap, a loopback port for Seatbelt.
   */
  private async entrance(): Promise<ProxyEntrance> {
    this.proxy ??= (async () => {
      const proxy = new FilteringProxy(new HostAllowList(this.policy.networkAllow));
      if (this.backend.name === "seatbelt") return { proxy, dir: undefined };
      return { proxy, dir: await mkdtemp(join(tmpdir(), "podkit-proxy-")) };
    })();
    const { proxy, dir } = await this.proxy;
    return proxy.open(
      dir === undefined ? { loopbackPort: 0 } : { socketPath: join(dir, `${++this.entrances}.sock`) },
    );
  }
}

/** A command that runs as it is: nothing contains it, so nothing is reported about it. */
function unconfined(command: SandboxCommand): WrappedCommand {
  return {
    ...command,
    sandboxed: false,
    refusals: () => 0,
    denial: async () => undefined,
    release: async () => {},
  };
}

/**
 * The sandbox of a pod (a tool set): its backend chosen by `[sandbox] backend` and the platform,
 * its policy by the scope, podkit's own directories and `[sandbox.network] allow`.
 */
export function createSandbox(options: CreateSandboxOptions): PodSandbox {
  return new PodSandbox(options);
}
