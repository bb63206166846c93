const marker = Symbol.for("podkit.testkit.error");

/**
 * The one error class of @podkit/testkit: a test set the double up wrongly (a bad script, an unreadable
 * recording). `isInstance` works across duplicated copies of the package.
 */
export class TestkitError extends Error {
  readonly [marker] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TestkitError";
  }

  /** True for any TestkitError, including one thrown by another copy of this package. */
  static isInstance(error: unknown): error is TestkitError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}
