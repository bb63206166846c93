import type { SharedV3ProviderMetadata } from "@ai-sdk/provider";

/** An Anthropic code-execution container a response ran in; later requests must name it to reuse it. */
export interface ProviderContainer {
  id: string;
  /** Epoch ms after which the provider has discarded it (NaN when unknown). */
  expiresAt: number;
}

/**
 * The container reported in a response's finish metadata, if any. Anthropic's code execution
 * keeps its files and state there; a `pause_turn` continuation or the next request that does not
 * name it starts from an empty container (the AI SDK's `forwardAnthropicContainerIdFromLastStep`
 * does the same for `streamText`).
 */
export function containerOf(metadata: SharedV3ProviderMetadata | undefined): ProviderContainer | undefined {
  const container = (metadata?.anthropic as { container?: { id?: unknown; expiresAt?: unknown } } | undefined)
    ?.container;
  if (typeof container?.id !== "string") return undefined;
  return {
    id: container.id,
    expiresAt: typeof container.expiresAt === "string" ? Date.parse(container.expiresAt) : Number.NaN,
  };
}

/** The container id to send now: the last one reported, unless it has expired. */
export function liveContainerId(container: ProviderContainer | undefined, now: number): string | undefined {
  if (container === undefined) return undefined;
  return container.expiresAt <= now ? undefined : container.id;
}
