/**
 * Hints for podkit errors that carry none of their own, by error class. Classes are recognised
 * by their `Symbol.for` markers (docs/errors.md), so this needs none of the packages loaded.
 */
const HINTS: readonly [marker: string, hint: (error: Record<string | symbol, unknown>) => string][] = [
  [
    "podkit.llm-worker.error.configuration",
    () => "check [model] in the manifest (`podkit manifest show` prints what it resolves to)",
  ],
  [
    "podkit.llm-worker.error.malformed-response",
    () => "the response was not retried; check any proxy or gateway in front of the provider",
  ],
  ["podkit.llm-worker.error.provider", providerHint],
  [
    "podkit.llm-worker.error.tool",
    () => "check [tools] and [[mcp.server]] in the manifest: two tools may not share a name",
  ],
  ["podkit.session-store.error.not-found", () => "`podkit session list` shows this workspace's sessions"],
  [
    "podkit.session-store.error.corrupt-entry",
    () =>
      "the lines before it are intact: `podkit session fork <session> --at-turn <n>` continues from a turn before it",
  ],
  [
    "podkit.session-store.error.lock-timeout",
    () => "another podkit process is writing this session; wait for it to finish (or end it) and run again",
  ],
  [
    "podkit.session-store.error.unsupported-format",
    () => "this log was written by a newer podkit; upgrade @podkit/cli to read it",
  ],
  [
    "podkit.pod.error.system-prompt-render",
    () => "fix the template at the place shown; `podkit prompt render` renders it without calling a model",
  ],
  [
    "podkit.pod.error.invalid-system-prompt-template",
    () =>
      "fix [worker] system_prompt at the line shown; `podkit prompt render` checks it without calling a model",
  ],
  [
    "podkit.pod.error.prompt-ref",
    () => "prompt references are $podkit/…, $user/… or $workspace/… paths without .. (docs/prompts.md)",
  ],
  [
    "podkit.pod.error.template-syntax",
    () => "fix the template syntax at the line shown (docs/prompts.md lists what templates may use)",
  ],
  [
    "podkit.pod.error.template-render",
    () => "fix the template at the line shown; `podkit prompt render` renders it without calling a model",
  ],
  [
    "podkit.pod.error.prompt-catalog",
    () => "fix the prompt pack named above; `podkit prompt catalog --explain` shows each layer's values",
  ],
];

function marked(error: object, marker: string): boolean {
  return (error as Record<symbol, unknown>)[Symbol.for(marker)] === true;
}

function providerHint(error: Record<string | symbol, unknown>): string {
  const status = error.status;
  if (status === 401 || status === 403)
    return "the provider refused the API key: check the variable [model] api_key_env names";
  if (status === 404)
    return "the provider does not know this model or endpoint: check [model] ref and base_url";
  if (error.kind === "connection")
    return "nothing answered at the model's endpoint: is the server at [model] base_url running?";
  return error.isRetryable === true
    ? "the provider failed after the retries; run again later (`podkit resume <session>` keeps the conversation)"
    : "the provider rejected the request; rerun with --debug for its full answer";
}

/** The hint for an error of a podkit package, when its class is known here. */
export function hintForError(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  for (const [marker, hint] of HINTS) {
    if (marked(error, marker)) return hint(error as Record<string | symbol, unknown>);
  }
  return undefined;
}
