import { hasMarker, PodkitPodError } from "../errors.js";

const URL_UNSET_MARKER = Symbol.for("podkit.pod.error.session-store-url-unset");

/**
 * `[session] store = "postgres"`, but the environment variable that `url_env` names is unset or
 * empty, so there is no database to open.
 */
export class SessionStoreUrlUnsetError extends PodkitPodError {
  readonly [URL_UNSET_MARKER] = true;
  override name = "SessionStoreUrlUnsetError";
  /** The variable `[session] url_env` names. */
  readonly variable: string;

  constructor(message: string, options: { variable: string; hint: string }) {
    super(message, { hint: options.hint });
    this.variable = options.variable;
  }

  static override isInstance(error: unknown): error is SessionStoreUrlUnsetError {
    return hasMarker(error, URL_UNSET_MARKER);
  }
}

const PACKAGE_MISSING_MARKER = Symbol.for("podkit.pod.error.session-store-package-missing");

/**
 * The manifest selects a store whose package (e.g. `@podkit/store-postgres`) is not installed
 * where the manifest is (and the application did not pass it).
 */
export class SessionStorePackageMissingError extends PodkitPodError {
  readonly [PACKAGE_MISSING_MARKER] = true;
  override name = "SessionStorePackageMissingError";
  /** The npm package to install. */
  readonly packageName: string;

  constructor(message: string, options: { packageName: string; hint: string; cause: unknown }) {
    super(message, { hint: options.hint, cause: options.cause });
    this.packageName = options.packageName;
  }

  static override isInstance(error: unknown): error is SessionStorePackageMissingError {
    return hasMarker(error, PACKAGE_MISSING_MARKER);
  }
}

const PACKAGE_INVALID_MARKER = Symbol.for("podkit.pod.error.session-store-package-invalid");

/** The store package the manifest selects was found but does not export `openStore`. */
export class SessionStorePackageInvalidError extends PodkitPodError {
  readonly [PACKAGE_INVALID_MARKER] = true;
  override name = "SessionStorePackageInvalidError";
  /** The npm package that was loaded. */
  readonly packageName: string;

  constructor(message: string, options: { packageName: string; hint: string }) {
    super(message, { hint: options.hint });
    this.packageName = options.packageName;
  }

  static override isInstance(error: unknown): error is SessionStorePackageInvalidError {
    return hasMarker(error, PACKAGE_INVALID_MARKER);
  }
}

const MEMORY_MISSING_MARKER = Symbol.for("podkit.pod.error.memory-package-missing");

/**
 * The manifest has a `[memory]` table, but `@podkit/memory` is not installed where the manifest
 * is (and the application did not pass it), so the pod cannot attach memory.
 */
export class MemoryPackageMissingError extends PodkitPodError {
  readonly [MEMORY_MISSING_MARKER] = true;
  override name = "MemoryPackageMissingError";
  /** The npm package to install. */
  readonly packageName: string;

  constructor(message: string, options: { packageName: string; hint: string; cause: unknown }) {
    super(message, { hint: options.hint, cause: options.cause });
    this.packageName = options.packageName;
  }

  static override isInstance(error: unknown): error is MemoryPackageMissingError {
    return hasMarker(error, MEMORY_MISSING_MARKER);
  }
}

const MEMORY_INVALID_MARKER = Symbol.for("podkit.pod.error.memory-package-invalid");

/** The memory package was found but does not export `attachMemory`. */
export class MemoryPackageInvalidError extends PodkitPodError {
  readonly [MEMORY_INVALID_MARKER] = true;
  override name = "MemoryPackageInvalidError";
  /** The npm package that was loaded. */
  readonly packageName: string;

  constructor(message: string, options: { packageName: string; hint: string }) {
    super(message, { hint: options.hint });
    this.packageName = options.packageName;
  }

  static override isInstance(error: unknown): error is MemoryPackageInvalidError {
    return hasMarker(error, MEMORY_INVALID_MARKER);
  }
}

const MEMORY_NO_WORKSPACE_MARKER = Symbol.for("podkit.pod.error.memory-without-workspace");

/**
 * `[memory]` is on but the workspace has no `.podkit/` directory: memory keeps its records in
 * `<workspace>/.podkit/memory`, and nothing but `podkit init` creates `.podkit/`.
 */
export class MemoryWithoutWorkspaceError extends PodkitPodError {
  readonly [MEMORY_NO_WORKSPACE_MARKER] = true;
  override name = "MemoryWithoutWorkspaceError";
  /** The workspace that has no `.podkit/`. */
  readonly workspace: string;

  constructor(message: string, options: { workspace: string; hint?: string }) {
    super(message, {
      hint:
        options.hint ??
        `run \`podkit init\` in ${options.workspace} (or create its .podkit/ directory), or remove the [memory] table`,
    });
    this.workspace = options.workspace;
  }

  static override isInstance(error: unknown): error is MemoryWithoutWorkspaceError {
    return hasMarker(error, MEMORY_NO_WORKSPACE_MARKER);
  }
}
