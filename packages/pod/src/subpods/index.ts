export type { ChildPodInfo } from "./children.js";
export { SubpodRoleError } from "./errors.js";
export type { SubpodPlacement } from "./placement.js";
