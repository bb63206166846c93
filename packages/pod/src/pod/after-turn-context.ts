import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import type { PodTelemetry } from "../telemetry/pod-telemetry.js";
import type { AfterTurnJobContext } from "./after-turn-jobs.js";
import type { PodExtensionPoints } from "./extension-points.js";
import type { PodEngine } from "./pod-engine.js";
import type { PodEventHub } from "./pod-events.js";

/** What an after-turn pass reads of the pod. */
export interface AfterTurnParts {
  readonly engine: PodEngine;
  readonly store: Store<Item>;
  readonly extensionPoints: PodExtensionPoints;
  readonly events: PodEventHub;
  readonly telemetry: PodTelemetry;
  /** `pod.appendExtension`: through the pod's writer, after any turn in progress. */
  appendExtension(domain: string, payload: unknown): Promise<void>;
}

/**
 * The context of an after-turn pass (`final`: the pass at close): the head segment as it is when
 * the pass starts; undefined before the session exists.
 */
export function afterTurnContextOf(parts: AfterTurnParts, final: boolean): AfterTurnJobContext | undefined {
  const { engine, store, extensionPoints, telemetry } = parts;
  const log = engine.log;
  if (log === undefined) return undefined;
  const ref = { sessionId: log.state.sessionId, segmentId: log.state.segmentId };
  return {
    ...ref,
    signal: extensionPoints.afterTurn.signal,
    final,
    extension: (domain) => engine.extensions.get(domain),
    readEntries: (segmentId = ref.segmentId) => store.readAll({ sessionId: ref.sessionId, segmentId }),
    readFrom: (segment, from) => store.readFrom(segment, from, { signal: extensionPoints.afterTurn.signal }),
    appendExtension: (domain, payload) => parts.appendExtension(domain, payload),
    emit: (event) => {
      telemetry.onJobEvent(event);
      parts.events.publish(event);
    },
    onWorkerEvent: (job, event) => telemetry.onJobWorkerEvent(job, event),
  };
}
