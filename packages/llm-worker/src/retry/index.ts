export { isRetryableStatus } from "./classify-error.js";
export {
  backoffDelay,
  type Clock,
  DEFAULT_RETRY_POLICY,
  type RetryPolicy,
  realSleep,
  retryAfterMs,
  type Sleep,
} from "./retry-policy.js";
