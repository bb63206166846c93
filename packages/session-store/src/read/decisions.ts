import { z } from "zod";

/**
 * The `extension` domain of a containment decision (docs/permissions.md, "Decisions in the log"):
 * the mode or a rule denied or asked, the scope or the OS sandbox refused, a hook decided, a
 * guardrail rejected. Additive within format v3: a reader that does not know the domain keeps it as
 * opaque extension state. Approvals keep their own entries (`approval_requested`/`_answered`).
 */
export const POLICY_DECISION_DOMAIN = "policy.decision";

/** Who decided: the permission mode, a `[[permissions.rule]]`, the scope, the OS sandbox, a hook, a guardrail. */
export const DECIDERS = ["mode", "rule", "scope", "sandbox", "hook", "guardrail"] as const;
export type Decider = (typeof DECIDERS)[number];

/**
 * What was decided: `deny` (the call did not run, or containment stopped it), `ask` (an approval
 * was asked), `allow` (a rule allowed what the builtin policy would have asked about), `pause` (a
 * hook paused the run before the call), and the
 * guardrail outcomes `reject` (the content is withheld), `feedback` (the model is told and goes
 * on), `stop` (the run ends).
 */
export const DECISION_OUTCOMES = ["allow", "ask", "deny", "pause", "reject", "feedback", "stop"] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

/** Where a guardrail ran. */
export const GUARDRAIL_POINTS = ["input", "before_tool", "after_tool", "final_answer"] as const;
export type GuardrailPoint = (typeof GUARDRAIL_POINTS)[number];

/** The payload of a `policy.decision` entry, as written (snake_case, like every log field). */
export const PolicyDecisionSchema = z.object({
  decided_by: z.enum(DECIDERS),
  outcome: z.enum(DECISION_OUTCOMES),
  /** The call it is about (absent for an input or final-answer guardrail). */
  call_id: z.string().optional(),
  tool: z.string().optional(),
  /** The pod's path from its root, as approvals name it. */
  pod_path: z.array(z.string()),
  /** The rule as the manifest spells it, the hook's or guardrail's name, the sandbox rule. */
  rule: z.string().optional(),
  reason: z.string().optional(),
  /** A guardrail's point. */
  point: z.enum(GUARDRAIL_POINTS).optional(),
});
export type PolicyDecision = z.infer<typeof PolicyDecisionSchema>;

/** A decision as the read model shows it (`podkit session show`, `GET /sessions/:id`). */
export interface DecisionSummary {
  decidedBy: Decider;
  outcome: DecisionOutcome;
  callId?: string;
  tool?: string;
  podPath: string[];
  rule?: string;
  reason?: string;
  point?: GuardrailPoint;
  at: number;
}

/**
 * The decision an `extension` entry's payload records, or undefined when it is not one a reader
 * of this version understands (a log is untrusted: a malformed payload is shown as an unknown
 * extension, never a crash; a newer podkit's outcome is skipped the same way).
 */
export function decisionOf(payload: unknown, at: number): DecisionSummary | undefined {
  const parsed = PolicyDecisionSchema.safeParse(payload);
  if (!parsed.success) return undefined;
  const d = parsed.data;
  return {
    decidedBy: d.decided_by,
    outcome: d.outcome,
    ...(d.call_id === undefined ? {} : { callId: d.call_id }),
    ...(d.tool === undefined ? {} : { tool: d.tool }),
    podPath: d.pod_path,
    ...(d.rule === undefined ? {} : { rule: d.rule }),
    ...(d.reason === undefined ? {} : { reason: d.reason }),
    ...(d.point === undefined ? {} : { point: d.point }),
    at,
  };
}
