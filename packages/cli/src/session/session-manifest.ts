import { existsSync } from "node:fs";
import type { Item } from "@podkit/llm-worker";
import {
  findWorkspace,
  type LoadedManifest,
  loadManifest,
  workspaceDataDir,
  workspaceManifestPath,
} from "@podkit/manifest";
import {
  invocationManifestPath,
  invocationOf,
  type ManifestInvocation,
  openWorkspaceFsStore,
  recordedInvocation,
} from "@podkit/pod";
import { NotFoundError, type Store } from "@podkit/session-store";
import { type CommandContext, type CommandInput, stringList, stringOption } from "../commands/command.js";
import { loadPodManifest } from "./load-pod-manifest.js";
import { openStore } from "./open-store.js";

/**
 * Tables whose `--set` overlays change what a pod may do. A session's record is read back from
 * its log, which is untrusted: overlays of these are never taken from it, only from the command
 * line (the command says so and shows how to repeat them).
 */
const AUTHORITY_TABLES = new Set(["scope", "tools", "mcp", "subpods"]);

/** True when the command line names a manifest (`-m`) or overlays (`--set`). */
export function namesManifest(input: CommandInput): boolean {
  return stringOption(input.values.manifest) !== undefined || stringList(input.values.set).length > 0;
}

/** The manifest the command line names, else the workspace's; undefined when there is neither. */
export async function loadManifestIfAny(
  input: CommandInput,
  ctx: CommandContext,
): Promise<LoadedManifest | undefined> {
  if (!namesManifest(input) && !existsSync(workspaceManifestPath(findWorkspace(ctx.env)))) return undefined;
  return loadPodManifest(input, ctx);
}

/**
 * The store a command reads sessions from: the one its manifest selects, else (no manifest at all)
 * the workspace's filesystem store — where `podkit run -m <file>` wrote them — so listing,
 * showing and answering work without repeating `-m`. The caller closes it.
 */
export function openCommandStore(
  loaded: LoadedManifest | undefined,
  ctx: CommandContext,
): Promise<Store<Item>> {
  if (loaded !== undefined) return openStore(loaded, ctx.io.env);
  return Promise.resolve(openWorkspaceFsStore(workspaceDataDir(findWorkspace(ctx.env), ctx.env)));
}

/**
 * The manifest to continue session `sessionId` with — the one rule of `podkit resume` (and of the
 * sessions `podkit serve` restores, through `manifestForSession`): the `-m` and `--set` the
 * session was started with (recorded in its log, `pod.invocation`) unless the command line names
 * its own, in which case those win and a differing record is reported.
 */
export async function loadSessionManifest(
  input: CommandInput,
  ctx: CommandContext,
  sessionId: string,
): Promise<LoadedManifest> {
  const given = await loadManifestIfAny(input, ctx);
  const store = await openCommandStore(given, ctx);
  let recorded: ManifestInvocation | undefined;
  try {
    recorded = await recordedInvocation(store, sessionId);
  } catch (error) {
    // A session that is not there is reported by the command itself, with its own hint.
    if (!NotFoundError.isInstance(error)) throw error;
  } finally {
    await store.close();
  }
  const warn = (text: string) => ctx.io.stderr.write(`warning: ${text}\n`);
  if (namesManifest(input) || recorded === undefined) {
    const loaded = given ?? (await loadPodManifest(input, ctx));
    if (recorded !== undefined && !sameInvocation(recorded, invocationOf(loaded))) {
      warn(
        `session ${sessionId} was started with ${describeInvocation(recorded)}; continuing with ${describeInvocation(invocationOf(loaded))} as given`,
      );
    }
    return loaded;
  }
  const loaded = await manifestForSession(recorded, findWorkspace(ctx.env), ctx.env, warn);
  ctx.io.stderr.write(
    `using the manifest session ${sessionId} was started with: ${describeInvocation(recorded)}\n`,
  );
  return loaded;
}

/**
 * Loads the manifest a session's record names, in `workspace`: its file and the overlays outside
 * the authority tables (`warn` names each one left out, with how to repeat it).
 */
export async function manifestForSession(
  recorded: ManifestInvocation,
  workspace: string,
  env: CommandContext["env"],
  warn: (text: string) => void,
): Promise<LoadedManifest> {
  const overlays: string[] = [];
  for (const overlay of recorded.set ?? []) {
    if (AUTHORITY_TABLES.has(overlayTable(overlay))) {
      warn(
        `not reusing --set ${overlay} from the session's log: it changes what the pod may do; repeat it to use it`,
      );
    } else overlays.push(overlay);
  }
  const file = invocationManifestPath(workspace, recorded);
  return loadManifest({ ...(file === undefined ? {} : { file }), overlays, env: { ...env, workspace } });
}

/** `-m <file> --set a=b …` as a person would type it. */
export function describeInvocation(invocation: ManifestInvocation | undefined): string {
  if (invocation === undefined) return "the workspace's manifest";
  return [
    ...(invocation.manifest === undefined ? [] : [`-m ${invocation.manifest}`]),
    ...(invocation.set ?? []).map((overlay) => `--set ${overlay}`),
  ].join(" ");
}

function sameInvocation(a: ManifestInvocation | undefined, b: ManifestInvocation | undefined): boolean {
  return describeInvocation(a) === describeInvocation(b);
}

function overlayTable(overlay: string): string {
  const key = overlay.slice(0, Math.max(0, overlay.indexOf("="))).trim();
  return (key.split(".")[0] ?? "").replace(/^["']|["']$/g, "").trim();
}
