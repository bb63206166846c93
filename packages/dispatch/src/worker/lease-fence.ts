import type { Claim } from "../dispatcher.js";
import { DispatchError, LeaseLostError } from "../errors.js";

/**
 * The synchronous fence of one attempt: before every session write and every tool start the
 * attempt calls `check()`, which passes only while the engine's last confirmation of the lease is
 * younger than the lease (`Claim.leaseConfirmedAt`, `Claim.leaseMs`). It reads the clock, not a
 * signal an asynchronous heartbeat sets later, so a worker that was paused past its lease (a GC
 * pause, a swapped-out VM, SIGSTOP) finds the fence closed by the first thing it does after it
 * resumes. Once closed — by that check, by the engine reporting the lease lost, or by a write that
 * found another writer in the session (`close`) — it stays closed and `signal` aborts, which stops
 * the attempt's pod.
 */
export class LeaseFence {
  private readonly closing = new AbortController();
  private readonly onLost: () => void;

  constructor(
    private readonly claim: Claim,
    private readonly runId: string,
    private readonly now: () => number = Date.now,
  ) {
    this.onLost = () => this.close(claim.leaseLost.reason);
    if (claim.leaseLost.aborted) this.onLost();
    else claim.leaseLost.addEventListener("abort", this.onLost, { once: true });
  }

  /** Aborts when the fence closes. */
  get signal(): AbortSignal {
    return this.closing.signal;
  }

  get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /** Throws `LeaseLostError` (and closes the fence) unless the lease is surely still held now. */
  check(): void {
    if (!this.closed) {
      const age = this.now() - this.claim.leaseConfirmedAt;
      if (age >= this.claim.leaseMs) {
        this.close(
          new DispatchError(
            `the lease was last confirmed ${age} ms ago and holds ${this.claim.leaseMs} ms (this worker stalled, or its heartbeats failed)`,
          ),
        );
      }
    }
    if (this.closed) throw new LeaseLostError(this.runId, this.closing.signal.reason);
  }

  /** Closes the fence for good: nothing more of this attempt is written or started. */
  close(reason: unknown): void {
    if (!this.closed) this.closing.abort(reason);
  }

  /** Stops listening to the claim (the attempt has ended). */
  dispose(): void {
    this.claim.leaseLost.removeEventListener("abort", this.onLost);
  }
}
