// Attribute and metric names of the OpenTelemetry GenAI semantic conventions (development status,
// the `gen_ai.*` registry), spelled out here so the pod depends on `@opentelemetry/api` only.
// podkit's own additions live under `podkit.*`.

export const ATTR = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  requestMaxTokens: "gen_ai.request.max_tokens",
  requestTemperature: "gen_ai.request.temperature",
  requestTopP: "gen_ai.request.top_p",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  responseFinishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheCreationTokens: "gen_ai.usage.cache_creation.input_tokens",
  tokenType: "gen_ai.token.type",
  agentName: "gen_ai.agent.name",
  agentDescription: "gen_ai.agent.description",
  conversationId: "gen_ai.conversation.id",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  systemInstructions: "gen_ai.system_instructions",
  errorType: "error.type",
  serverAddress: "server.address",
  serverPort: "server.port",
  // podkit's own
  segmentId: "podkit.segment.id",
  runTrigger: "podkit.run.trigger",
  runStatus: "podkit.run.status",
  requestNumber: "podkit.request",
  stopReason: "podkit.stop_reason",
  reasoningTokens: "podkit.usage.reasoning_tokens",
  attempt: "podkit.request.attempt",
  retryDelayMs: "podkit.retry.delay_ms",
  continuation: "podkit.request.continuation",
  podkitOperation: "podkit.operation.name",
  compactionReason: "podkit.compaction.reason",
  compactionFromSegment: "podkit.compaction.from_segment_id",
  compactionToSegment: "podkit.compaction.to_segment_id",
  compactionTokensBefore: "podkit.compaction.tokens_before",
  compactionTokensAfter: "podkit.compaction.tokens_after",
  compactionDisabled: "podkit.compaction.disabled",
  jobDetail: "podkit.job.detail",
} as const;

/** Span events podkit adds (the conventions define none for retries or stream continuations). */
export const EVENT = {
  retry: "podkit.request.retry",
  continuation: "podkit.request.continuation",
  toolCallDropped: "podkit.tool_call.dropped",
  answerTruncated: "podkit.answer.truncated",
  driftFork: "podkit.session.drift_fork",
  policyDecision: "podkit.policy.decision",
} as const;

export const METRIC = {
  tokenUsage: "gen_ai.client.token.usage",
  operationDuration: "gen_ai.client.operation.duration",
} as const;

/** The conventions' advised histogram boundaries. */
export const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
export const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/**
 * `gen_ai.provider.name` for a podkit provider: the conventions' well-known value where one
 * applies (OpenAI-compatible servers are `openai`, as the conventions ask for clients of the
 * OpenAI wire), otherwise the provider as podkit names it.
 */
export function providerNameOf(provider: string): string {
  // A custom LanguageModelV3 reports e.g. `anthropic.messages`: its family is the first part.
  const family = provider.split(".")[0] ?? provider;
  switch (family) {
    case "openai":
    case "openai-chat":
    case "openai-compatible":
      return "openai";
    case "google":
      return "gcp.gemini";
    default:
      return family;
  }
}

/**
 * `error.type`: the error's class name (podkit errors name their class, e.g. `ProviderError`);
 * `_OTHER` for a thrown value that is not an Error.
 */
export function errorTypeOf(error: unknown): string {
  return error instanceof Error && error.name !== "" ? error.name : "_OTHER";
}
