export {
  type LoadPodResourcesOptions,
  loadPodResources,
  type PodResourceSource,
  type PodResources,
} from "./load-pod-resources.js";
