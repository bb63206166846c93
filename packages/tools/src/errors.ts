import type { ErrorKind } from "@podkit/llm-worker";

const BASE_MARKER = Symbol.for("podkit.tools.error");

/** True when `value` carries `marker` (a `Symbol.for` key): the package's one identity check. */
export function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Base class of every error thrown by `@podkit/tools`. `isInstance` checks a `Symbol.for`
 * marker, so it works across duplicated copies of the package.
 */
export class ToolsError extends Error {
  readonly [BASE_MARKER] = true;
  /** What the user can do about it, one line. */
  readonly hint: string | undefined;
  /** How a caller treats it (docs/errors.md, "Kinds"): a setup to fix, unless a class says otherwise. */
  readonly errorKind: ErrorKind = "usage";

  constructor(message: string, options?: { cause?: unknown; hint?: string }) {
    super(message, { cause: options?.cause });
    this.name = "ToolsError";
    this.hint = options?.hint;
  }

  static isInstance(value: unknown): value is ToolsError {
    return hasMarker(value, BASE_MARKER);
  }
}

/** Where a tool package was declared and where it was looked for. */
export interface ToolPackageLocation {
  /** The `[tools] packages` entry as written. */
  specifier: string;
  /** The manifest file (or `--set` overlay) that declared it; "" for packages given in code. */
  declaredIn: string;
  /** The directory it was resolved from. */
  resolveFrom: string;
}

const NOT_FOUND_MARKER = Symbol.for("podkit.tools.error.package-not-found");

/** A `[tools] packages` entry that Node's resolver cannot find. */
export class ToolPackageNotFoundError extends ToolsError {
  readonly [NOT_FOUND_MARKER] = true;
  readonly location: ToolPackageLocation;
  /** The places that were searched (node_modules directories, or the file for a path). */
  readonly searched: readonly string[];

  constructor(location: ToolPackageLocation, searched: readonly string[], cause?: unknown) {
    const where = searched.length > 0 ? `; looked in ${searched.join(", ")}` : "";
    super(
      `tool package "${location.specifier}"${declared(location)} was not found from ${location.resolveFrom}${where}`,
      {
        cause,
        hint: isPath(location.specifier)
          ? "fix the path (it is relative to the manifest that lists it)"
          : `install it next to the manifest (npm install ${location.specifier}) or remove it from [tools] packages`,
      },
    );
    this.name = "ToolPackageNotFoundError";
    this.location = location;
    this.searched = searched;
  }

  static override isInstance(value: unknown): value is ToolPackageNotFoundError {
    return hasMarker(value, NOT_FOUND_MARKER);
  }
}

const BAD_EXPORT_MARKER = Symbol.for("podkit.tools.error.bad-package-export");

/**
 * A tool package that was found but cannot be used: importing it threw, it exports no
 * `definePodkitToolPackage(…)` value, or its `tools(ctx)` failed.
 */
export class ToolPackageExportError extends ToolsError {
  readonly [BAD_EXPORT_MARKER] = true;
  readonly location: ToolPackageLocation;
  /** The file Node resolved the package to. */
  readonly file: string;
  readonly problem: string;

  constructor(location: ToolPackageLocation, file: string, problem: string, cause?: unknown) {
    super(`tool package "${location.specifier}"${declared(location)} (${file}) cannot be used: ${problem}`, {
      cause,
      hint: 'the module must `export default definePodkitToolPackage({ name, tools(ctx) { … } })` (from "@podkit/tools") or export it as `podkitToolPackage`',
    });
    this.name = "ToolPackageExportError";
    this.location = location;
    this.file = file;
    this.problem = problem;
  }

  static override isInstance(value: unknown): value is ToolPackageExportError {
    return hasMarker(value, BAD_EXPORT_MARKER);
  }
}

function declared(location: ToolPackageLocation): string {
  return location.declaredIn ? ` (listed in ${location.declaredIn})` : "";
}

/** True for a specifier Node treats as a path rather than a package name. */
export function isPath(specifier: string): boolean {
  return (
    specifier.startsWith("./") ||
    specifier.startsWith("../") ||
    specifier.startsWith("/") ||
    specifier === "." ||
    specifier === ".."
  );
}
