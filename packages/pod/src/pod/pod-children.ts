import type { PodBudget } from "../budget/pod-budget.js";
import type { SubpodRole } from "../subpods/roles.js";
import { type ChildPod, hostSubpods, type SubpodHost } from "../subpods/subpod-host.js";
import type { PodTelemetry } from "../telemetry/pod-telemetry.js";
import { type ChildPodFactory, type OpenedChild, openChildPod } from "./child-options.js";
import type { PodEvent } from "./events.js";
import type { PodEngine } from "./pod-engine.js";
import type { PodFoundation } from "./pod-foundation.js";
import type { PodOptions } from "./pod-options.js";

/** What a pod gives the host of its children. */
export interface ChildrenParts<P> {
  readonly foundation: PodFoundation;
  readonly engine: PodEngine;
  readonly options: PodOptions;
  readonly telemetry: PodTelemetry;
  readonly budget: PodBudget | undefined;
  /** The pod's constructors, for its children (`Pod.fromManifest` / `Pod.restore`). */
  readonly factory: ChildPodFactory<P>;
  /** The pod itself: its session, and its notification path. */
  readonly pod: { readonly sessionId: string | undefined; notify(message: string): void };
}

/**
 * The host of a pod's children (its manifest declares roles), wired to the pod: the catalog's
 * texts, its notifications, its approval gate (a suspended call's delegated request), its trace,
 * and its tool server, which gets the four sub-pod tools.
 */
export function hostPodChildren<P extends OpenedChild & ChildPod>(
  parts: ChildrenParts<P>,
  roles: ReadonlyMap<string, SubpodRole>,
): SubpodHost {
  const { foundation, engine, options } = parts;
  const parent = {
    options,
    mode: engine.mode,
    store: foundation.store,
    emit: (event: PodEvent) => foundation.events.emit(event),
  };
  return hostSubpods(
    {
      sessionId: () => parts.pod.sessionId,
      store: foundation.store,
      scope: foundation.loaded.scope,
      workspace: foundation.loaded.workspace,
      placement: options.subpod,
      budget: parts.budget?.tree,
      text: (key, ...context) => engine.catalog.render(key, ...context),
      notify: (message) => parts.pod.notify(message),
      warn: foundation.warn,
      toolTraceContext: (callId) => parts.telemetry.toolContext(callId),
      open: (role, placement, sessionId) => openChildPod(parts.factory, parent, role, placement, sessionId),
      delegate: (callId, childSessionId) => engine.approvals.delegate(callId, childSessionId),
      delegatedTo: (callId) => engine.approvals.delegatedTo(callId),
    },
    roles,
    (tool) => foundation.toolServer.registerTool(tool),
  );
}
