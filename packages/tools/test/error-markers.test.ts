import { ERROR_KINDS } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { ToolPackageExportError, ToolPackageNotFoundError, ToolsError } from "../src/errors.js";
import { PathChangedError, PathNotVerifiableError } from "../src/fs/checked-open.js";
import { McpConfigError } from "../src/mcp/errors.js";
import { SandboxUnavailableError } from "../src/sandbox/errors.js";

// Every error class carries its own `Symbol.for("podkit.tools.error.<kind>")` marker; its
// `isInstance` checks that marker, never the mutable `name` (docs/errors.md).
const location = { specifier: "x", declaredIn: "/m.toml", resolveFrom: "/" };
const CASES = [
  {
    kind: "package-not-found",
    errorKind: "usage",
    make: () => new ToolPackageNotFoundError(location, ["/node_modules/x"]),
    is: ToolPackageNotFoundError,
  },
  {
    kind: "bad-package-export",
    errorKind: "usage",
    make: () => new ToolPackageExportError(location, "/x.js", "no export"),
    is: ToolPackageExportError,
  },
  {
    kind: "path-changed",
    errorKind: "conflict",
    make: () => new PathChangedError("a.txt"),
    is: PathChangedError,
  },
  {
    kind: "path-not-verifiable",
    errorKind: "unsupported",
    make: () => new PathNotVerifiableError("a.txt"),
    is: PathNotVerifiableError,
  },
  {
    kind: "mcp-config",
    errorKind: "usage",
    make: () => new McpConfigError({ server: "github", problem: "give exactly one of `command` and `url`" }),
    is: McpConfigError,
  },
  {
    kind: "sandbox-unavailable",
    errorKind: "unsupported",
    make: () =>
      new SandboxUnavailableError({ backend: "bwrap", problem: "bubblewrap (bwrap) was not found on PATH" }),
    is: SandboxUnavailableError,
  },
] as const;

describe("tools errors carry per-class markers", () => {
  it.each(CASES)("$kind: is of kind $errorKind, one of the vocabulary", ({ make, errorKind }) => {
    expect(ERROR_KINDS).toContain(errorKind);
    expect(make().errorKind).toBe(errorKind);
    expect(new ToolsError("x").errorKind).toBe("usage");
  });

  it.each(CASES)(
    "$kind: recognised by its marker even when renamed, and only by it",
    ({ kind, make, is }) => {
      const error = make();
      expect(is.isInstance(error)).toBe(true);
      expect(ToolsError.isInstance(error)).toBe(true);
      error.name = "Renamed";
      expect(is.isInstance(error)).toBe(true);
      const impostor = Object.assign(new ToolsError("x"), { name: is.name });
      expect(is.isInstance(impostor)).toBe(false);
      const foreign = Object.assign(new Error("another copy"), {
        [Symbol.for("podkit.tools.error")]: true,
        [Symbol.for(`podkit.tools.error.${kind}`)]: true,
      });
      expect(is.isInstance(foreign)).toBe(true);
      for (const other of CASES) expect(other.is.isInstance(error)).toBe(other.is === is);
    },
  );
});

describe("tools errors say what to do next", () => {
  it("SandboxUnavailableError: install bubblewrap, or turn the sandbox off on purpose", () => {
    const missing = new SandboxUnavailableError({ backend: "bwrap", problem: "bwrap was not found" });
    expect(missing.hint).toBe(
      'install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap), or set [sandbox] backend = "none" to run commands without a sandbox',
    );
    const elsewhere = new SandboxUnavailableError({ backend: "win32", problem: "no OS sandbox for win32" });
    expect(elsewhere.hint).toContain('set [sandbox] backend = "none"');
    expect(new SandboxUnavailableError({ backend: "bwrap", problem: "x", hint: "do this" }).hint).toBe(
      "do this",
    );
  });
});
