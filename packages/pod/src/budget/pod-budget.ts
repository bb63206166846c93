import type { Item, PreRequestContext, UsageRecord } from "@podkit/llm-worker";
import type { BudgetConfig } from "@podkit/manifest";
import type { Store } from "@podkit/session-store";
import type { PodHooks } from "../pod/hooks.js";
import { estimateTokens } from "../usage/token-estimator.js";
import { sessionTotals, treeTokens } from "./log-totals.js";
import type { TreeBudget } from "./tree-budget.js";

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
  /** True for a root pod: it reads the tree's totals from the logs and measures the tree's wall time. */
  readonly root: boolean;
  now(): number;
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
  private stopped: BudgetExhausted | undefined;

  constructor(
    private readonly caps: BudgetConfig,
    private readonly tree: TreeBudget,
    private readonly source: BudgetSource,
  ) {}

  /** The hook that checks every request of the pod's runs. */
  hooks(): PodHooks {
    return { preRequest: (context) => this.beforeRequest(context) };
  }

  /** A run starts: its tokens and wall time count from here. */
  async startRun(): Promise<void> {
    this.stopped = undefined;
    this.runStartedAt = this.source.now();
    if (this.source.root) this.tree.rootRunStarted(this.runStartedAt, (await this.base()).wallMs);
  }

  /** A run ended: its tokens are settled for good; the cap that stopped it, if one did. */
  endRun(): BudgetExhausted | undefined {
    const runTokens = tokensOf(this.source.runRecords());
    this.earlierRuns += runTokens;
    this.tree.settle(this, this.earlierRuns);
    this.tree.reserve(this, 0);
    if (this.source.root) this.tree.rootRunEnded(this.source.now());
    void this.base().then((base) => {
      base.wallMs += this.source.now() - this.runStartedAt;
      base.tokens += runTokens;
    });
    return this.stopped;
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
        this.stopped = { cap, limit, spent, estimate: needed };
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
