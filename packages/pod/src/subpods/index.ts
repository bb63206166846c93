export type { ChildPodInfo } from "./children.js";
export { SubpodRoleError, SubpodSessionError } from "./errors.js";
export type { SubpodPlacement } from "./placement.js";
