import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public surface of @podkit/tools", () => {
  it("exports what apps, the pod and tool-package authors call, and none of the internals", () => {
    expect(Object.keys(api).sort()).toEqual([
      "CALL_TOOL",
      "FILES_CHANGED_DOMAIN",
      "FIND_TOOLS",
      "MCP_TOOLS_CHANGED_DOMAIN",
      "McpConfigError",
      "SANDBOX_PROBE_DOMAIN",
      "SandboxUnavailableError",
      "ToolPackageExportError",
      "ToolPackageNotFoundError",
      "ToolsError",
      "builtinToolPackage",
      "createSandbox",
      "deferredCallOf",
      "definePodkitToolPackage",
      "escalationReason",
      "filesChangedSchema",
      "isWorkspacePath",
      "loadToolPackages",
      "mcpToolPackage",
      "mcpToolsChangedSchema",
      "parseFilesChanged",
    ]);
    // The tools themselves, the scope plumbing, the marker check and the MCP wiring stay inside.
    for (const internal of [
      "BUILTIN_PACKAGE_NAME",
      "isPodkitToolPackage",
      "mcpToolName",
      "DEFAULT_MCP_CALL_TIMEOUT_MS",
      "DEFAULT_MCP_CONNECT_TIMEOUT_MS",
      "hasMarker",
      "grepTool",
      "bashTool",
      "openChecked",
      "PathChangedError",
      "childEnvironment",
      "planMounts",
      "seatbeltProfile",
      "BwrapBackend",
      "FilteringProxy",
      "failureDenial",
      "PodkitFiles",
      "podkitPaths",
      "ESCALATE_ARGUMENT",
      "WorkspaceTracker",
      "TrackedTree",
      "scanTree",
      "writeTracked",
      "rankTools",
      "deferredPair",
      "ToolDeferral",
      "DualEraClient",
    ]) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });
});
