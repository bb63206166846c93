import { describeErrorScheme } from "../../../test-support/error-scheme.js";
import * as api from "../src/index.js";

// Every error class carries its own `Symbol.for("podkit.manifest.error.<kind>")` marker; its
// `isInstance` checks that marker, never the mutable `name` (docs/errors.md). A manifest that
// cannot be used is the user's to fix: every class here is of kind `usage`.
describeErrorScheme(
  "manifest",
  api,
  {
    PodkitManifestError: () => new api.PodkitManifestError("base"),
    ManifestError: () => new api.ManifestError("m", { kind: "schema", issues: [] }),
    ScopeError: () => new api.ScopeError("m", { target: "x", problem: "unresolvable" }),
    WorkspaceNotFoundError: () => new api.WorkspaceNotFoundError("m"),
  },
  {
    PodkitManifestError: "usage",
    ManifestError: "usage",
    ScopeError: "usage",
    WorkspaceNotFoundError: "usage",
  },
);
