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
