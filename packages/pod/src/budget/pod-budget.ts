import type { Item, PreRequestContext, UsageRecord } from "@podkit/llm-worker";
import type { BudgetConfig } from "@podkit/manifest";
import type { Store } from "@podkit/session-store";
import { estimateTokens } from "../usage/token-estimator.js";
import { sessionTotals, treeTokens } from "./log-totals.js";
import { TreeBudget } from "./tree-budget.js";

/** A cap of `[budget]`. */
export type BudgetCap =
  | "run_tokens"
  | "session_tokens"
  | "tree_tokens"
  | "run_wall_ms"
  | "session_wall_ms"
  | "tree_wall_ms";

/** Why a run stopped with `budget_exhausted`: the cap, its limit, what was spent and the refused request's estimate. */
export interface BudgetExhausted {
  readonly cap: BudgetCap;
  readonly limit: number;
  readonly spent: number;
  /** The estimated input tokens of the request that was not sent (0 for a wall-time cap). */
  readonly estimate: number;
}

/** What a pod's budget reads of its pod. */
export interface BudgetSource {
  readonly store: Store<Item>;
  sessionId(): string | undefined;
  /** The head segment's usage records (the estimator calibrates on them). */
  records(): readonly UsageRecord[];
  /** The usage records of the run in progress. */
  runRecords(): readonly UsageRecord[];
  now(): number;
}

/** The hook a budget checks every request with (a `PodHooks` member). */
export interface BudgetHooks {
  preRequest(context: PreRequestContext): Promise<{ action: "continue" } | { action: "yield" }>;
}

const tokensOf = (records: readonly UsageRecord[]) =>
  records.reduce((sum, record) => sum + record.inputTokens + record.outputTokens, 0);

/**
 * One pod's budget: before each request it settles what the run spent so far (the pod's usage
 * ledger, fed by the worker after each `llm_usage` entry), estimates the request, and either
 * reserves the estimate in the tree or stops the run before anything is sent (`yield`, then
 * `budget_exhausted`). Caps: the pod's own `[budget]` for run and session, the root's for the tree.
 */
export class PodBudget {
  private sessionBase: Promise<{ tokens: number; wallMs: number }> | undefined;
  private earlierRuns = 0;
  private runStartedAt = 0;
  private stoppedBy: BudgetExhausted | undefined;

  private constructor(
    private readonly caps: BudgetConfig,
    readonly tree: TreeBudget,
    private readonly source: BudgetSource & {
      /** A root reads the tree's totals from the logs and measures the tree's wall time. */
      readonly root: boolean;
    },
  ) {}

  /**
   * A pod's budget: its own `[budget]` caps and the tree's — a root's own, a child's handed down
   * from its parent (`inherited`); undefined when no cap applies.
   */
  static of(
    caps: BudgetConfig | undefined,
    inherited: TreeBudget | undefined,
    source: BudgetSource,
  ): PodBudget | undefined {
    if (caps === undefined && inherited === undefined) return undefined;
    const tree = inherited ?? new TreeBudget(caps ?? {});
    return new PodBudget(caps ?? {}, tree, { ...source, root: inherited === undefined });
  }

  /** The cap that stopped the run in progress (its request was not sent), if one did. */
  get stopped(): BudgetExhausted | undefined {
    return this.stoppedBy;
  }

  /** The hook that checks every request of the pod's runs. */
  hooks(): BudgetHooks {
    return { preRequest: (context) => this.beforeRequest(context) };
  }

  /** A run starts: its tokens and wall time count from here. */
  async startRun(): Promise<void> {
    this.stoppedBy = undefined;
    this.runStartedAt = this.source.now();
    if (this.source.root) this.tree.rootRunStarted(this.runStartedAt, (await this.base()).wallMs);
  }

  /** A run ended: its tokens are settled for good. */
  endRun(): void {
    const runTokens = tokensOf(this.source.runRecords());
    this.earlierRuns += runTokens;
    this.tree.settle(this, this.earlierRuns);
    this.tree.reserve(this, 0);
    if (this.source.root) this.tree.rootRunEnded(this.source.now());
    void this.base().then((base) => {
      base.wallMs += this.source.now() - this.runStartedAt;
      base.tokens += runTokens;
    });
  }

  private async beforeRequest(
    context: PreRequestContext,
  ): Promise<{ action: "continue" } | { action: "yield" }> {
    const base = await this.base();
    const runTokens = tokensOf(this.source.runRecords());
    this.tree.settle(this, this.earlierRuns + runTokens);
    this.tree.reserve(this, 0);
    const estimate = estimateTokens({
      systemPrompt: context.systemPrompt,
      items: context.items,
      usage: this.source.records(),
    }).tokens;
    const now = this.source.now();
    const runWall = now - this.runStartedAt;
    const checks: [BudgetCap, number | undefined, number, number][] = [
      ["run_tokens", this.caps.run_tokens, runTokens, estimate],
      ["session_tokens", this.caps.session_tokens, base.tokens + runTokens, estimate],
      ["tree_tokens", this.tree.caps.tree_tokens, await this.tree.committed(this), estimate],
      ["run_wall_ms", this.caps.run_wall_ms, runWall, 0],
      ["session_wall_ms", this.caps.session_wall_ms, base.wallMs + runWall, 0],
      ["tree_wall_ms", this.tree.caps.tree_wall_ms, this.tree.wallMs(now), 0],
    ];
    for (const [cap, limit, spent, needed] of checks) {
      if (limit === undefined) continue;
      const over = needed === 0 ? spent >= limit : spent + needed > limit;
      if (over) {
        this.stoppedBy = { cap, limit, spent, estimate: needed };
        return { action: "yield" };
      }
    }
    this.tree.reserve(this, estimate);
    return { action: "continue" };
  }

  /** The session's (and, for a root, the tree's) totals in the log before this pod's first run here. */
  private base(): Promise<{ tokens: number; wallMs: number }> {
    this.sessionBase ??= (async () => {
      const sessionId = this.source.sessionId();
      const totals =
        sessionId === undefined
          ? { tokens: 0, wallMs: 0 }
          : await sessionTotals(this.source.store, sessionId);
      if (this.source.root) {
        await this.tree.loadBase(async () =>
          sessionId === undefined ? 0 : await treeTokens(this.source.store, sessionId),
        );
      }
      return totals;
    })();
    return this.sessionBase;
  }
}
