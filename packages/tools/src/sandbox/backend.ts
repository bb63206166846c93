import type { Scope } from "@podkit/manifest";
import type { SandboxCommand } from "./sandbox.js";

/**
 * What a sandbox enforces, all of it derived from the pod's manifest: the scope (its write rules
 * become writable paths, its read rules read-only ones, its deny rules hidden ones), podkit's own
 * directories (never writable from inside), and the hosts the network may reach.
 */
export interface SandboxPolicy {
  readonly scope: Scope;
  /** podkit's own directories (`<workspace>/.podkit`, the session directory): read-only at most. */
  readonly protectedPaths: readonly string[];
  /** `[sandbox.network] allow`; empty: no network at all. */
  readonly networkAllow: readonly string[];
  /** The home directory processes are told about (`HOME`): a private empty one unless the scope covers it. */
  readonly home: string | undefined;
}

/**
 * Where a sandboxed process reaches the allowed hosts: its own entrance to the host-side filtering
 * proxy (one per process, so the proxy knows whose connections it refused).
 */
export interface NetworkBridge {
  /** The entrance's unix socket (bound into a Linux sandbox, where a relay listens on `relayPort`). */
  readonly socketPath: string | undefined;
  /** The entrance's TCP port on 127.0.0.1 (macOS: the only outbound connection the profile allows). */
  readonly tcpPort: number | undefined;
}

/** The outcome of a backend's probe. */
export type BackendProbe =
  | { readonly ok: true; readonly version: string | null; readonly degraded: readonly string[] }
  | { readonly ok: false; readonly version: string | null; readonly problem: string };

/**
 * A sandbox implementation: bubblewrap, Seatbelt, none — and the seam where a container or a
 * remote runner would plug in. `probe` checks it can run here (its version, then a trivial command
 * inside the real policy); `wrap` turns a command into the one to spawn.
 */
export interface SandboxBackend {
  /** `bwrap`, `seatbelt`, `none`, … (the `backend` of the probe entry). */
  readonly name: string;
  /** True when `wrap` contains anything (false only for `none`). */
  readonly contains: boolean;
  probe(policy: SandboxPolicy, signal?: AbortSignal): Promise<BackendProbe>;
  /** `network` is set when `policy.networkAllow` names hosts and the proxy is running. */
  wrap(
    command: SandboxCommand,
    policy: SandboxPolicy,
    network: NetworkBridge | undefined,
  ): Promise<SandboxCommand>;
  /** Releases what the backend holds (placeholder files, …). */
  close(): Promise<void>;
}
