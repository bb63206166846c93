export {
  bytesOfItem,
  bytesOfItems,
  type EstimateMethod,
  estimateTokens,
  type TokenEstimate,
} from "./token-estimator.js";
