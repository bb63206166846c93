import type { ChildProcess, SpawnOptions } from "node:child_process";
import type { ToolDenial } from "@podkit/llm-worker";

/** A process to start: the program, its arguments, its working directory and environment. */
export interface SandboxCommand {
  /** The program: a path, or a name looked up on `env.PATH` (inside the sandbox when wrapped). */
  readonly file: string;
  readonly args: readonly string[];
  /** Absolute. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

/**
 * The process to spawn instead: the sandbox's launcher around the command, or the command itself;
 * and what the sandbox saw of that process once it runs.
 */
export interface WrappedCommand extends SandboxCommand {
  /**
   * False when nothing contains it: `[sandbox] backend = "none"`, a sandbox that could not run, or
   * a call the pod approved to run outside (`ToolSandbox.escalate`).
   */
  readonly sandboxed: boolean;
  /**
   * What containment refused this process, for a tool output's `denied` (docs/sandbox.md, "What
   * gets reported"): a connection the network proxy refused it (after the first `since` refusals,
   * a `refusals()` count taken earlier: what one call of a long-lived server caused); else, when
   * `failed`, best effort, an error in `output` on a path the sandbox hides or keeps read-only.
   * Undefined when nothing points at the sandbox, and always for a process it does not contain.
   */
  denial(output: string, options?: { failed?: boolean; since?: number }): Promise<ToolDenial | undefined>;
  /** How many connections the network proxy has refused this process so far. */
  refusals(): number;
  /**
   * Frees what the sandbox holds for this process (its entrance to the network proxy). Call it
   * once the process has ended; idempotent. The pod's close frees whatever is left.
   */
  release(): Promise<void>;
}

/** The outcome of `ToolSandbox.escalate`: the command to run outside the sandbox, or why not. */
export type EscalationOutcome =
  | { readonly ok: true; readonly command: WrappedCommand }
  | { readonly ok: false; readonly denied: ToolDenial };

/**
 * The `extension` domain of the log entry a pod writes with what its sandbox probe found (a
 * `SandboxProbe`). Additive in session format 3 (docs/session-store.md, "What bumps the version").
 */
export const SANDBOX_PROBE_DOMAIN = "sandbox.probe";

/**
 * What the sandbox probe found when the pod started: the payload of the `sandbox.probe` log entry
 * (docs/sandbox.md). `degraded` lists, in words, everything weaker than the manifest asks for;
 * it is empty when every process the pod starts is contained as configured.
 */
export interface SandboxProbe {
  /** `bwrap` (Linux), `seatbelt` (macOS), or `none`. */
  readonly backend: string;
  /** The backend's version (`0.8.0` for bubblewrap 0.8.0), null when unknown or unavailable. */
  readonly version: string | null;
  /** True when processes start inside the backend; false when they run without a sandbox. */
  readonly active: boolean;
  /** The hosts processes may reach (`[sandbox.network] allow`); empty: no network. */
  readonly network: readonly string[];
  readonly degraded: readonly string[];
}

/** `spawn` options of `ToolSandbox.spawn`; `cwd` defaults to the workspace, `env` to none. */
export type SandboxSpawnOptions = Omit<SpawnOptions, "cwd" | "env" | "shell" | "argv0"> & {
  cwd?: string;
  env?: Readonly<Record<string, string>>;
};

/**
 * The pod's sandbox as tool packages see it (`ToolPackageContext.sandbox`): every process a
 * package starts goes through it, so it runs under the same file rules (the scope), the same
 * read-only protection of podkit's own files and the same network allow list as `bash`.
 */
export interface ToolSandbox {
  /**
   * What the sandbox is: its backend, version, network and anything degraded. The probe runs
   * once per pod; later calls return its result.
   */
  probe(): Promise<SandboxProbe>;
  /**
   * The command to spawn for `command`: the sandbox's launcher with the command inside. Throws
   * `SandboxUnavailableError` when the sandbox cannot run and `[sandbox] fail_if_unavailable` is
   * on; otherwise (after a warning at the first use) returns the command unchanged with
   * `sandboxed: false`.
   */
  wrap(command: SandboxCommand): Promise<WrappedCommand>;
  /**
   * `wrap`, then `child_process.spawn` of the result (released when the child closes). To report
   * what the sandbox refused the process, use `wrap` and its `denial` instead.
   */
  spawn(file: string, args: readonly string[], options?: SandboxSpawnOptions): Promise<ChildProcess>;
  /**
   * Whether a call may run a command outside the sandbox once the pod approved it: `on-approval`,
   * or `never` for a sub-pod, whose sandbox is a loan from its parent (authority only narrows).
   */
  readonly escalation: "on-approval" | "never";
  /**
   * `command` unconfined (`sandboxed: false`) for the call `callId`, when the pod approved exactly
   * that call to leave the sandbox (an `ask` approval naming the reason, recorded in the log); the
   * approval is used up. Otherwise a refusal, `denied` by the sandbox: no approval, or a sub-pod.
   */
  escalate(command: SandboxCommand, callId: string): Promise<EscalationOutcome>;
}
