import { hasMarker, PodkitPodError } from "../errors.js";

const ROLE_MARKER = Symbol.for("podkit.pod.error.subpod-role");

/**
 * A `[subpods.<role>]` that cannot be used (a bad manifest path, a manifest that does not load,
 * a scope or tools wider than the parent's). Thrown when the parent pod is built, naming the
 * parent's manifest file and line of the role and the role itself.
 */
export class SubpodRoleError extends PodkitPodError {
  readonly [ROLE_MARKER] = true;
  override name = "SubpodRoleError";
  readonly role: string;
  readonly file: string | undefined;
  readonly line: number | undefined;

  constructor(
    where: { role: string; file?: string | undefined; line?: number | undefined },
    problem: string,
    options?: { cause?: unknown; hint?: string },
  ) {
    const at =
      where.file === undefined ? "" : `${where.file}${where.line === undefined ? "" : `:${where.line}`}: `;
    super(`${at}[subpods.${where.role}]: ${problem}`, options);
    this.role = where.role;
    this.file = where.file;
    this.line = where.line;
  }

  static override isInstance(error: unknown): error is SubpodRoleError {
    return hasMarker(error, ROLE_MARKER);
  }
}

const SESSION_MARKER = Symbol.for("podkit.pod.error.subpod-session");

/**
 * A sub-pod's session that cannot be opened the way it was asked: with a placement that is not
 * the one its log records, or from outside its tree when the tree's manifests no longer lend it
 * what its log says it was spawned as (its role gone, its depth past the role's `max_depth`, a
 * depth that does not match its place in the tree). A child is only ever opened with its role's
 * manifest, loan and depth, never with more; this is what is thrown instead.
 */
export class SubpodSessionError extends PodkitPodError {
  readonly [SESSION_MARKER] = true;
  override name = "SubpodSessionError";
  readonly sessionId: string;

  constructor(sessionId: string, problem: string, options?: { cause?: unknown; hint?: string }) {
    super(`session ${sessionId} ${problem}`, {
      hint:
        options?.hint ??
        "a sub-pod runs with its role's manifest and scope only: continue its tree from the root (podkit resume <root>) and let the parent's send_pod continue it",
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.sessionId = sessionId;
  }

  static override isInstance(error: unknown): error is SubpodSessionError {
    return hasMarker(error, SESSION_MARKER);
  }
}
