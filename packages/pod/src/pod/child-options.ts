import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest, PermissionMode } from "@podkit/manifest";
import type { Store } from "@podkit/session-store";
import type { SubpodPlacement } from "../subpods/placement.js";
import type { SubpodRole } from "../subpods/roles.js";
import type { PodEvent } from "./events.js";
import { hookPodOf, type PodHooks } from "./hooks.js";
import type { PodOptions } from "./pod-options.js";

/**
 * A child's options: the parent's model, environment, clock, store, render limits, telemetry,
 * optional packages and approver (so a child's approval reaches the person who answers the
 * root's, naming the child's pod path), the application's `childHooks` and `toolStartCheck`, and its placement; memory
 * is not attached. Not the parent's own hooks, tool packages given in code, `autoRun` or
 * `autoApprove`: nothing that approves or allows is inherited silently.
 */
export function childOptions(
  parent: PodOptions,
  placement: SubpodPlacement,
  parentMode?: PermissionMode,
): PodOptions {
  const {
    model,
    env,
    clock,
    store,
    renderLimits,
    telemetry,
    onWarning,
    signal,
    approver,
    childHooks,
    toolStartCheck,
    packages,
  } = parent;
  return {
    // The tree remembers through its root (whose history holds every child's answer): a child
    // never attaches the manifest's [memory] it inherits, so it runs no extraction of its own.
    attachMemory: false,
    ...(packages === undefined ? {} : { packages }),
    // Hooks the application gives for children (on purpose) reach every depth.
    ...(childHooks === undefined ? {} : { childHooks }),
    // A child's tools start under the same check as the parent's (a dispatch worker's lease fence).
    ...(toolStartCheck === undefined ? {} : { toolStartCheck }),
    // The person who answers the root's approvals answers the children's: each request carries the
    // child's pod path. `autoApprove` is never passed on.
    ...(approver === undefined ? {} : { approver }),
    ...(model === undefined ? {} : { model }),
    ...(env === undefined ? {} : { env }),
    ...(clock === undefined ? {} : { clock }),
    ...(store === undefined ? {} : { store }),
    ...(renderLimits === undefined ? {} : { renderLimits }),
    ...(telemetry === undefined ? {} : { telemetry }),
    ...(onWarning === undefined ? {} : { onWarning }),
    ...(signal === undefined ? {} : { signal }),
    // The parent's mode: the child runs in the tighter of it and its role's (never looser).
    ...(parentMode === undefined ? {} : { mode: parentMode }),
    subpod: placement,
  };
}

/** What opening a child needs of a pod: its constructors (passed in, so this file never imports the class). */
export interface ChildPodFactory<P> {
  fromManifest(loaded: LoadedManifest, options: PodOptions): Promise<P>;
  restore(loaded: LoadedManifest, sessionId: string, options: PodOptions): Promise<P>;
}

/** The part of a pod a parent wires when it opens a child. */
export interface OpenedChild {
  startSession(): Promise<string>;
  addHooks(hooks: PodHooks): void;
  subscribe(listener: (event: PodEvent) => void): () => void;
  close(): Promise<void>;
}

/**
 * Builds (or, with `sessionId`, restores) the child pod of `role` at `placement` for a parent with
 * `options` writing to `store`: its session exists afterwards, the application's `childHooks` are
 * registered on it, and its events reach the parent's stream tagged with its pod path (a
 * grandchild's event already carries its full path and is passed on as it is).
 */
export async function openChildPod<P extends OpenedChild>(
  factory: ChildPodFactory<P>,
  parent: {
    readonly options: PodOptions;
    readonly mode: PermissionMode;
    readonly store: Store<Item>;
    emit(event: PodEvent): void;
  },
  role: SubpodRole,
  placement: SubpodPlacement,
  sessionId?: string,
): Promise<P> {
  const options = { ...childOptions(parent.options, placement, parent.mode), store: parent.store };
  const pod =
    sessionId === undefined
      ? await factory.fromManifest(role.loaded, options)
      : await factory.restore(role.loaded, sessionId, options);
  try {
    const id = sessionId ?? (await pod.startSession());
    const hooks = parent.options.childHooks?.(hookPodOf(placement, id));
    if (hooks !== undefined) pod.addHooks(hooks);
    const { path } = placement;
    pod.subscribe((event) =>
      parent.emit(event.type === "subpod" ? event : { type: "subpod", path, sessionId: id, event }),
    );
    return pod;
  } catch (error) {
    await pod.close();
    throw error;
  }
}
