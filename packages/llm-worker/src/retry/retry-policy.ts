/** A source of time, injectable so tests and replays can pin it. */
export interface Clock {
  now(): number;
}

/** Waits `ms` milliseconds; rejects with the signal's reason when it fires first. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/**
 * How model requests are retried and continued. Delays use full jitter
 * (`random() * min(maxDelayMs, baseDelayMs * 2^(attempt-1))`) unless the provider sent
 * `Retry-After`, which is honoured as given.
 */
export interface RetryPolicy {
  /** Requests per step before giving up, counting the first (≥ 1). */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Total time a step may spend waiting between attempts; a wait that would exceed it ends the retries. */
  totalBudgetMs: number;
  /** No content within this long after sending → the attempt is abandoned and retried. */
  firstEventTimeoutMs: number;
  /** No stream part within this long after output began → treated as a broken stream. */
  idleTimeoutMs: number;
  /** Re-issues after a stream broke mid-output, per step. */
  maxContinuations: number;
  clock: Clock;
  sleep: Sleep;
  /** Returns a number in [0, 1). */
  random: () => number;
}

/** Sleeps on a real timer, cancelled by the signal. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
  totalBudgetMs: 120_000,
  firstEventTimeoutMs: 90_000,
  idleTimeoutMs: 120_000,
  maxContinuations: 2,
  clock: { now: () => Date.now() },
  sleep: realSleep,
  random: Math.random,
};

/** The full-jitter backoff delay before retry number `attempt` (1 = the first retry). */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(policy.random() * ceiling);
}

/**
 * Reads a retry delay from response headers: `retry-after-ms`, or `retry-after` as seconds or
 * an HTTP date (relative to `now`). Returns undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Record<string, string> | undefined, now: number): number | undefined {
  if (!headers) return undefined;
  const lower: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = value;
  const ms = lower["retry-after-ms"];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = lower["retry-after"]?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
