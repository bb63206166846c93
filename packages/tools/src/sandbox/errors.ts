import type { ErrorKind } from "@podkit/llm-worker";
import { hasMarker, ToolsError } from "../errors.js";

const UNAVAILABLE_MARKER = Symbol.for("podkit.tools.error.sandbox-unavailable");

/**
 * The OS sandbox cannot run here (bubblewrap missing, user namespaces disabled, no sandbox for the
 * platform) and `[sandbox] fail_if_unavailable` is on — by default whenever `[tools] bash` is:
 * the pod does not start rather than run commands unconfined. `unsupported`: this host lacks what
 * the manifest needs; one with it (or the same after installing bubblewrap) runs the pod.
 */
export class SandboxUnavailableError extends ToolsError {
  readonly [UNAVAILABLE_MARKER] = true;
  override readonly errorKind: ErrorKind = "unsupported";
  /** The backend that was probed: `bwrap`, `seatbelt`, or the platform's name. */
  readonly backend: string;
  /** What the probe found, in words. */
  readonly problem: string;
  /** The key that made it fatal. */
  readonly keyPath = "sandbox.fail_if_unavailable";
  /** The manifest file that set that key; undefined when it is the default (bash is on). */
  readonly file: string | undefined;

  constructor(args: { backend: string; problem: string; file?: string; hint?: string }) {
    const why =
      args.file === undefined
        ? "[sandbox] fail_if_unavailable is on (the default while [tools] bash is on)"
        : `[sandbox] fail_if_unavailable is on (set in ${args.file})`;
    super(`the OS sandbox cannot run: ${args.problem}; ${why}, so the pod does not start`, {
      hint:
        args.hint ??
        (args.backend === "bwrap"
          ? 'install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap), or set [sandbox] backend = "none" to run commands without a sandbox'
          : 'set [sandbox] backend = "none" to run commands without a sandbox, or fail_if_unavailable = false to run them unconfined with a warning'),
    });
    this.name = "SandboxUnavailableError";
    this.backend = args.backend;
    this.problem = args.problem;
    this.file = args.file;
  }

  static override isInstance(value: unknown): value is SandboxUnavailableError {
    return hasMarker(value, UNAVAILABLE_MARKER);
  }
}
