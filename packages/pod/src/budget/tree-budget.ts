import type { BudgetConfig } from "@podkit/manifest";

/**
 * The budget a root shares with its sub-pods in this process: the root's tree caps, what the
 * tree's logs held when the root started here (`base`), what each pod settled since, and the
 * estimates reserved for requests in flight — so concurrent children never pass the cap together.
 */
export class TreeBudget {
  private base: Promise<number> | undefined;
  private readonly settled = new Map<object, number>();
  private readonly reserved = new Map<object, number>();
  /** When the root's run in progress started (tree wall time counts the root's runs). */
  private rootRunStartedAt: number | undefined;
  private rootWallBase = 0;

  constructor(readonly caps: BudgetConfig) {}

  /** The tree's tokens recorded before this process, read once (before any request of this process). */
  loadBase(read: () => Promise<number>): Promise<number> {
    this.base ??= read();
    return this.base;
  }

  /** Tokens spent by the tree, plus what other pods reserved for requests in flight. */
  async committed(except: object): Promise<number> {
    let total = await (this.base ?? Promise.resolve(0));
    for (const tokens of this.settled.values()) total += tokens;
    for (const [pod, tokens] of this.reserved) if (pod !== except) total += tokens;
    return total;
  }

  /** Tokens spent by the tree (settled only). */
  async spent(): Promise<number> {
    let total = await (this.base ?? Promise.resolve(0));
    for (const tokens of this.settled.values()) total += tokens;
    return total;
  }

  settle(pod: object, tokens: number): void {
    this.settled.set(pod, tokens);
  }

  reserve(pod: object, tokens: number): void {
    if (tokens > 0) this.reserved.set(pod, tokens);
    else this.reserved.delete(pod);
  }

  /** The root's runs measure the tree's wall time. */
  rootRunStarted(now: number, wallBase: number): void {
    this.rootRunStartedAt = now;
    this.rootWallBase = wallBase;
  }

  rootRunEnded(now: number): void {
    if (this.rootRunStartedAt !== undefined) this.rootWallBase += now - this.rootRunStartedAt;
    this.rootRunStartedAt = undefined;
  }

  wallMs(now: number): number {
    return this.rootWallBase + (this.rootRunStartedAt === undefined ? 0 : now - this.rootRunStartedAt);
  }
}
