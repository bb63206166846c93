import type { LoadedManifest } from "@podkit/manifest";
import { SessionLog } from "@podkit/session-store";
import { effectiveMode } from "../permissions/permissions.js";
import { loadSubpodRoles, type SubpodRole } from "../subpods/roles.js";
import { placeSession } from "../subpods/tree-placement.js";
import { SystemPromptTemplate } from "../system-prompt/system-prompt-template.js";
import { processWarningSink } from "../warnings.js";
import { childOptions } from "./child-options.js";
import { attachManifestMemory } from "./memory-selection.js";
import type { PodEngineStart } from "./pod-engine.js";
import {
  closeFoundation,
  holdStore,
  loadFoundation,
  loadResources,
  type PodFoundation,
  sessionLogOptions,
} from "./pod-foundation.js";
import type { PodOptions } from "./pod-options.js";
import { isResumable, otherBranchesWarning } from "./pod-restore.js";

/** What a pod is built from: its foundation, options, how its engine starts, and the roles it may spawn. */
export interface PodParts {
  readonly foundation: PodFoundation;
  readonly options: PodOptions;
  readonly start: PodEngineStart;
  readonly roles: ReadonlyMap<string, SubpodRole>;
}

/** Builds the pod from its parts (the `Pod` constructor, passed in so this file never imports the class). */
type PodMaker<P> = (parts: PodParts) => P;

/** The part of a pod this file needs: closing it when memory cannot be attached. */
interface Closable {
  close(): Promise<void>;
}

/** `Pod.fromManifest`: see there. */
export async function buildPod<P extends Closable>(
  loaded: LoadedManifest,
  options: PodOptions,
  make: PodMaker<P>,
): Promise<P> {
  const resources = await loadResources(loaded, options);
  const template = SystemPromptTemplate.parse(loaded.manifest.worker.system_prompt, resources.loader);
  const roles = await subpodRolesOf(loaded, options);
  const foundation = await loadFoundation(loaded, resources, options);
  return withManifestMemory(make({ foundation, options, start: { template }, roles }), loaded, options);
}

/** `Pod.restore`: see there. */
export async function restorePod<P extends Closable>(
  loaded: LoadedManifest,
  sessionId: string,
  options: PodOptions,
  make: PodMaker<P>,
): Promise<P> {
  const held = await holdStore(loaded, options);
  try {
    // A sub-pod's session is never opened as a root: from outside its tree it gets its role's
    // manifest, loan and depth (derived from `loaded` as the tree's root manifest), never more.
    const place = await placeSession(held.store, sessionId, loaded, {
      placement: options.subpod,
      warn: options.onWarning ?? processWarningSink,
    });
    const own = place.kind === "derived" ? place.loaded : loaded;
    // Restored from outside its tree, a child's parent mode is its root's (the per-run one, else the
    // root manifest's); the chain's roles are already folded into its manifest's mode.
    const ownOptions =
      place.kind === "derived"
        ? childOptions(options, place.placement, effectiveMode(loaded, options.mode, false))
        : options;
    return await restoreHeld(own, sessionId, { ...ownOptions, store: held.store }, held.owned, make);
  } catch (error) {
    if (held.owned) await held.store.close();
    throw error;
  }
}

/** `restorePod` on a store already opened (`owned`: the pod closes it with itself). */
async function restoreHeld<P extends Closable>(
  loaded: LoadedManifest,
  sessionId: string,
  options: PodOptions,
  owned: boolean,
  make: PodMaker<P>,
): Promise<P> {
  const resources = await loadResources(loaded, options);
  const roles = await subpodRolesOf(loaded, options);
  const foundation = await loadFoundation(loaded, resources, options, { ownsStore: owned });
  let pod: P;
  try {
    const log = await SessionLog.open(foundation.store, sessionId, sessionLogOptions(foundation));
    const { last } = await foundation.store.describeSegment({
      sessionId: log.state.sessionId,
      segmentId: log.state.segmentId,
    });
    pod = make({ foundation, options, start: { restored: log, resumable: isResumable(last, log) }, roles });
    const branches = await otherBranchesWarning(foundation.store, sessionId, log);
    if (branches !== undefined) foundation.warn({ code: "pod.other_branches", message: branches });
  } catch (error) {
    await closeFoundation(foundation);
    throw error;
  }
  return withManifestMemory(pod, loaded, options);
}

/** The pod with the memory its manifest's `[memory]` asks for; closed when that fails. */
async function withManifestMemory<P extends Closable>(
  pod: P,
  loaded: LoadedManifest,
  options: PodOptions,
): Promise<P> {
  try {
    await attachManifestMemory(pod, loaded, options);
    return pod;
  } catch (error) {
    await pod.close();
    throw error;
  }
}

/** The roles a pod may spawn; a child leaves out (with a warning) those its own loan cannot cover. */
function subpodRolesOf(
  loaded: LoadedManifest,
  options: PodOptions,
): Promise<ReadonlyMap<string, SubpodRole>> {
  if (options.subpod === undefined) return loadSubpodRoles(loaded);
  return loadSubpodRoles(loaded, { warn: options.onWarning ?? processWarningSink });
}
