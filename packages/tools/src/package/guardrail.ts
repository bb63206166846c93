type Maybe<T> = T | Promise<T>;

/**
 * What a guardrail decided (docs/permissions.md, "Guardrails"): `allow`; `reject` the content (an
 * input is not sent, a call does not run, a result or an answer is withheld); `feedback`: tell the
 * model `message` and go on; `stop` the run. Every outcome but `allow` is a `policy.decision`
 * entry in the session log.
 */
export type GuardrailOutcome =
  | { readonly action: "allow" }
  | { readonly action: "reject"; readonly reason: string }
  | { readonly action: "feedback"; readonly message: string }
  | { readonly action: "stop"; readonly reason: string };

/** What every guardrail check is given besides its subject. */
export interface GuardrailContext {
  /** Aborts with the run: a guardrail that calls a classifier must stop promptly. */
  readonly signal: AbortSignal;
  /** The pod's path from its root (`["root"]`, a child's `["root", "reviewer#1"]`). */
  readonly podPath: readonly string[];
}

/** A tool call as a guardrail sees it (arguments as the model sent them: JSON text). */
export interface GuardrailCall {
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
}

/**
 * A check at up to four points of a run. Each runs before what it guards goes on — an input
 * guardrail holds the model's request until it passes, never racing it; a before-tool guardrail
 * runs before the tool; an after-tool guardrail before the model sees the result; a final-answer
 * guardrail before the run ends with the answer. A check that throws stops the run (fail closed).
 */
export interface Guardrail {
  /** Names the guardrail in the log (`<package>/<name>`). */
  readonly name: string;
  input?(input: { readonly text: string }, ctx: GuardrailContext): Maybe<GuardrailOutcome>;
  beforeTool?(call: GuardrailCall, ctx: GuardrailContext): Maybe<GuardrailOutcome>;
  afterTool?(
    call: GuardrailCall,
    result: { readonly summary: string; readonly content?: string; readonly isError: boolean },
    ctx: GuardrailContext,
  ): Maybe<GuardrailOutcome>;
  finalAnswer?(answer: { readonly text: string }, ctx: GuardrailContext): Maybe<GuardrailOutcome>;
}

/** A guardrail with the package that brought it (what the log names: `<package>/<name>`). */
export interface PackageGuardrail {
  readonly package: string;
  readonly guardrail: Guardrail;
}

/** The guardrail points, in the order a run meets them. */
export const GUARDRAIL_HOOKS = ["input", "beforeTool", "afterTool", "finalAnswer"] as const;

/** True for a value shaped like a guardrail (a package's export is untrusted until checked). */
export function isGuardrail(value: unknown): value is Guardrail {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  if (typeof v.name !== "string" || v.name === "") return false;
  const hooks = GUARDRAIL_HOOKS.filter((hook) => v[hook] !== undefined);
  return hooks.length > 0 && hooks.every((hook) => typeof v[hook] === "function");
}
