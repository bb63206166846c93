import { hasMarker, PodkitPodError } from "../errors.js";

const ROLE_MARKER = Symbol.for("podkit.pod.error.subpod_role");

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
