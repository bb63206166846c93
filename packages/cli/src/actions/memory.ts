import type { LoadedManifest } from "@podkit/manifest";
import {
  formatDiagnostics,
  lintWorkspaceMemory,
  queryWorkspaceMemory,
  RECORD_KINDS,
  type RecordKind,
  runMemoryConsolidation,
  runMemoryExtract,
} from "@podkit/memory";
import { loadPodResources, podModelAdapter } from "@podkit/pod";
import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { PodkitCliError } from "../errors.js";
import { checkApiKey, loadPodManifest } from "../session/load-pod-manifest.js";
import { openStore } from "../session/open-store.js";
import { startProgress } from "../session/progress.js";

/**
 * What the memory jobs need of the manifest: its model (key checked; the adapter built the one way
 * a pod builds its own), catalog and language.
 */
async function jobOptions(loaded: LoadedManifest, ctx: CommandContext) {
  checkApiKey(loaded, ctx.io.env);
  const adapter = podModelAdapter(loaded.manifest.model, undefined, ctx.io.env);
  const { catalog } = await loadPodResources(loaded, {
    onWarning: (warning) => ctx.io.stderr.write(`warning: ${warning.message}\n`),
  });
  return {
    workspace: loaded.workspace,
    model: adapter,
    prompts: catalog,
    language: loaded.manifest.worker.language,
  };
}

/** `podkit memory extract <session>` */
export async function extract(input: CommandInput, ctx: CommandContext): Promise<number> {
  const loaded = await loadPodManifest(input, ctx);
  const sessionId = input.positionals[0] as string;
  const options = await jobOptions(loaded, ctx);
  const sessions = await openStore(loaded, ctx.io.env);
  const progress = input.values.json === true ? undefined : startProgress(ctx.io.stderr, "extracting memory");
  try {
    const result = await runMemoryExtract({ ...options, sessions, sessionId });
    progress?.done(result.status);
    if (input.values.json === true) ctx.io.stdout.write(`${JSON.stringify(result)}\n`);
    else if (result.status === "extracted") ctx.io.stdout.write(`staged ${result.staging}\n`);
    else if (result.status === "below_threshold")
      ctx.io.stdout.write("nothing new to extract in this session\n");
    else ctx.io.stdout.write(`nothing worth remembering (${result.status})\n`);
    return 0;
  } catch (error) {
    progress?.failed(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    await sessions.close();
  }
}

/** `podkit memory consolidate` */
export async function consolidate(input: CommandInput, ctx: CommandContext): Promise<number> {
  const loaded = await loadPodManifest(input, ctx);
  const options = await jobOptions(loaded, ctx);
  let progress: ReturnType<typeof startProgress> | undefined;
  try {
    const result = await runMemoryConsolidation({
      ...options,
      force: true,
      gitCommit: loaded.manifest.memory?.git_commit === true,
      onStart: () => {
        if (input.values.json !== true) progress = startProgress(ctx.io.stderr, "consolidating memory");
      },
    });
    if (input.values.json === true) {
      ctx.io.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    }
    if (result.status === "below_threshold")
      ctx.io.stdout.write("the staging area is empty: nothing to consolidate\n");
    else if (result.status === "lock_in_use") {
      throw new PodkitCliError(`another consolidation is running (pid ${result.holder.pid})`, {
        hint: "wait for it to finish; a lock left by a dead process is taken over automatically",
      });
    } else if (result.status === "invalid_staging") {
      const first = result.invalidStaging[0];
      throw new PodkitCliError(
        `no staging file could be read (${result.invalidStaging.length}); the first: ${first?.file ?? "?"}: ${first?.problem ?? "?"}`,
        { hint: "the files are left in place: fix or delete them, then run podkit memory consolidate again" },
      );
    } else if (result.status === "consolidated") {
      progress?.done(`${result.changes.length} change(s) from ${result.consumed.length} staging file(s)`);
      for (const change of result.changes) {
        ctx.io.stdout.write(`${change.op} ${change.kind}/${change.slug}: ${change.reason}\n`);
      }
      if (result.tidy.status === "incomplete")
        ctx.io.stderr.write(`tidy step incomplete, its changes were dropped: ${result.tidy.reason}\n`);
    }
    return 0;
  } catch (error) {
    progress?.failed(error instanceof Error ? error.message : String(error));
    throw error;
  }
}

/** `podkit memory lint` */
export async function lint(input: CommandInput, ctx: CommandContext): Promise<number> {
  const loaded = await loadPodManifest(input, ctx);
  const report = await lintWorkspaceMemory(loaded.workspace);
  if (input.values.json === true) ctx.io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    const all = [...report.errors, ...report.warnings];
    ctx.io.stdout.write(all.length === 0 ? "memory records: no problems\n" : `${formatDiagnostics(all)}\n`);
  }
  return report.errors.length > 0 ? 1 : 0;
}

/** `podkit memory query <text>` */
export async function query(input: CommandInput, ctx: CommandContext): Promise<number> {
  const loaded = await loadPodManifest(input, ctx);
  const kind = stringOption(input.values.kind);
  if (kind !== undefined && !(RECORD_KINDS as readonly string[]).includes(kind)) {
    throw new PodkitCliError(`--kind must be one of ${RECORD_KINDS.join(", ")}, got "${kind}"`, {
      hint: "leave --kind out to search every kind",
    });
  }
  const limitText = stringOption(input.values.limit);
  const limit = limitText === undefined ? undefined : Number(limitText);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
    throw new PodkitCliError(`--limit must be a positive whole number, got "${limitText}"`, {
      hint: "e.g. --limit 5",
    });
  }
  const hits = await queryWorkspaceMemory(loaded.workspace, {
    query: input.positionals[0] as string,
    ...(kind === undefined ? {} : { kind: kind as RecordKind }),
    ...(limit === undefined ? {} : { limit }),
  });
  if (input.values.json === true) ctx.io.stdout.write(`${JSON.stringify(hits, null, 2)}\n`);
  else if (hits.length === 0) ctx.io.stdout.write("no memory record matches\n");
  else {
    for (const hit of hits) {
      ctx.io.stdout.write(`${hit.kind}/${hit.slug} (${hit.path})\n`);
      for (const match of hit.matches) ctx.io.stdout.write(`  ${match.line}: ${match.text}\n`);
    }
  }
  return 0;
}
