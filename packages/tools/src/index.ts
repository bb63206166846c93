export type { BashToolOptions } from "./bash/bash-tool.js";
export {
  BUILTIN_PACKAGE_NAME,
  type BuiltinToolOptions,
  builtinToolPackage,
} from "./builtin/builtin-package.js";
export {
  ToolPackageExportError,
  type ToolPackageLocation,
  ToolPackageNotFoundError,
  ToolsError,
} from "./errors.js";
export { type LoadToolPackagesOptions, loadToolPackages, type ToolSet } from "./load/load-tool-packages.js";
export * from "./mcp/index.js";
export {
  type DefinedToolPackage,
  definePodkitToolPackage,
  isPodkitToolPackage,
  type PodkitToolPackage,
  type ToolPackageContext,
  type ToolWarning,
  type ToolWarningSink,
} from "./package/tool-package.js";
