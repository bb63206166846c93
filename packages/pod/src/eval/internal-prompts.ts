import { createHash, randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import { canonicalJson } from "../context/context-key.js";
import { PodUsageError } from "../errors.js";
import { podModelAdapter } from "../pod/model.js";
import { loadPodResources } from "../resources/load-pod-resources.js";
import { EvalDir } from "./eval-dir.js";
import { variantManifest, variantOrigin } from "./eval-variant.js";
import {
  type InternalItemContext,
  type PreparedCompaction,
  prepareCompaction,
  runCompactionItem,
} from "./internal-prompts-compaction.js";
import {
  type ExtractItemContext,
  type PreparedExtract,
  prepareExtract,
  runExtractItem,
} from "./internal-prompts-extract.js";
import { checklistScorer, summaryScorer } from "./internal-prompts-scorers.js";
import {
  INTERNAL_PROMPT_KINDS,
  type InternalCase,
  type InternalEvalItemResult,
  type InternalEvalReport,
  type InternalScorer,
  type MemoryExtractor,
  type RunInternalEvalOptions,
} from "./internal-prompts-types.js";
import { judgeScorer } from "./judge.js";

const EVAL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Evaluates a changed internal prompt on recorded sessions. `compaction`: each case's compaction
 * (a recorded one, or the session's history at its end) is replayed by a pod built from the
 * variant — its catalog holds the changed `compact_system` — and what survived is scored: the
 * `checklist` scorer (texts that must survive), then `scorers` and `judges`, on the item and on
 * the recorded compaction alike. `memory_extract`: memory's extract (`extractor`) runs on a copy
 * of each case's segment with the variant's `memory_extract_system`, and what it extracted is
 * scored. Every item is a new session in `store` that starts with an `eval.origin` entry and ends
 * with the `eval.score` entries. Finished items are kept in `<evals dir>/<eval id>/items/`;
 * rerunning with the same `evalId` does not redo them. Bad cases fail with `EvalCaseError` before
 * any item runs.
 */
export async function runInternalEval(options: RunInternalEvalOptions): Promise<InternalEvalReport> {
  if (!INTERNAL_PROMPT_KINDS.includes(options.kind)) {
    throw new PodUsageError(`unknown internal prompt kind ${JSON.stringify(options.kind)}`, {
      hint: `the kinds are ${INTERNAL_PROMPT_KINDS.join(", ")}`,
    });
  }
  const evalId = options.evalId ?? `internal-${randomUUID()}`;
  if (!EVAL_ID.test(evalId)) {
    throw new PodUsageError(`eval id ${JSON.stringify(evalId)} is not a file name`, {
      hint: "use letters, digits, '.', '_' and '-' (at most 128), starting with a letter or digit",
    });
  }
  const concurrency = options.concurrency ?? 2;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new PodUsageError(`concurrency must be a whole number ≥ 1, not ${concurrency}`);
  }
  const scorers = [
    ...(options.checklist !== undefined || options.cases.some((c) => c.checklist !== undefined)
      ? [checklistScorer]
      : []),
    ...(options.scorers ?? []),
    ...(await judges(options)),
  ];
  if (scorers.length === 0) {
    throw new PodUsageError("an internal eval needs something to score: a checklist, scorers or judges", {
      hint: "give the texts that must survive (`checklist`, `--must-keep`), a scorer or a judge (`--judge`)",
    });
  }
  if (options.kind === "memory_extract" && options.extractor === undefined) {
    throw new PodUsageError("a memory extract eval needs `extractor`: memory's extract", {
      hint: "pass `extractor` (e.g. `@podkit/memory`'s runMemoryExtract, docs/evals.md); the CLI passes it itself",
    });
  }
  const store = options.store as Store<Item>;
  const prepare = options.kind === "compaction" ? prepareCompaction : prepareExtract;
  const prepared: Prepared[] = await Promise.all(
    options.cases.map((evalCase, index) =>
      prepare(store, evalCase, {
        key: itemKey(evalCase, index),
        name: internalCaseName(evalCase),
        checklist: [...(evalCase.checklist ?? []), ...(options.checklist ?? [])],
      }),
    ),
  );
  const manifest = variantManifest(options.variant);
  const origin = variantOrigin(options.variant);
  const dir = await EvalDir.open(options.evalsDir ?? join(manifest.dataDir, "evals"), evalId, {
    eval_id: evalId,
    internal: options.kind,
    variant: origin,
    cases: prepared.map((p) => ({ key: p.key, name: p.name })),
  });
  const finished = await dir.finished<InternalEvalItemResult>();
  const context: InternalItemContext = {
    evalId,
    store,
    manifest,
    podOptions: {
      // An item replays one internal prompt only: no memory job, no approval prompt.
      attachMemory: false,
      autoApprove: true,
      ...options.podOptions,
      store: options.store,
      ...(options.variant.model === undefined ? {} : { model: options.variant.model }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    },
    scorers,
    origin,
    tolerance: options.tolerance ?? 0,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const run =
    options.kind === "compaction"
      ? (item: Prepared) => runCompactionItem(item as PreparedCompaction, context)
      : await extractRunner(options, context);

  const results: InternalEvalItemResult[] = new Array(prepared.length);
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (next < prepared.length) {
      const index = next++;
      const item = prepared[index] as Prepared;
      options.signal?.throwIfAborted();
      const before = finished.get(item.key);
      const result = before === undefined ? await run(item) : { ...before, resumed: true };
      if (before === undefined) await dir.write(result);
      results[index] = result;
      done += 1;
      options.onItem?.(result, done, prepared.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, prepared.length) }, worker));
  const passed = results.filter((r) => r.pass).length;
  return {
    kind: options.kind,
    evalId,
    dir: dir.dir,
    items: results,
    passed,
    failed: results.length - passed,
    tolerance: options.tolerance ?? 0,
  };
}

type Prepared = PreparedCompaction | PreparedExtract;

/** A memory extract item's runner: the variant's catalog (its pack), model and language, once. */
async function extractRunner(
  options: RunInternalEvalOptions,
  context: InternalItemContext,
): Promise<(item: Prepared) => Promise<InternalEvalItemResult>> {
  const { manifest } = context;
  const onWarning = options.podOptions?.onWarning;
  const { catalog } = await loadPodResources(manifest, onWarning === undefined ? {} : { onWarning });
  const extractContext: ExtractItemContext = {
    ...context,
    extractor: options.extractor as MemoryExtractor,
    prompts: catalog,
    model: podModelAdapter(
      manifest.manifest.model,
      options.variant.model,
      options.podOptions?.env ?? process.env,
    ),
    language: manifest.manifest.worker.language,
  };
  return (item) => runExtractItem(item as PreparedExtract, extractContext);
}

/**
 * The judges, each resolved (rubric, model) before any item runs and shown the summary as the
 * answer (`summaryScorer`). Their prompts are the project's catalog, not the variant's pack: the
 * item and the recorded compaction are graded by the same words.
 */
async function judges(options: RunInternalEvalOptions): Promise<InternalScorer[]> {
  const list = options.judges ?? [];
  if (list.length === 0) return [];
  const names = list.map((judge) => judge.name ?? "judge");
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice !== undefined) {
    throw new PodUsageError(`two judges are named ${JSON.stringify(twice)}`, {
      hint: "give each judge its own name",
    });
  }
  const onWarning = options.podOptions?.onWarning;
  const { catalog } = await loadPodResources(
    options.variant.manifest,
    onWarning === undefined ? {} : { onWarning },
  );
  const setup = {
    catalog,
    manifest: options.variant.manifest,
    variantModel: options.variant.model,
    env: options.podOptions?.env ?? process.env,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const scorers: InternalScorer[] = [];
  for (const judge of list) scorers.push(summaryScorer(await judgeScorer(judge, setup)));
  return scorers;
}

/** A case's name in reports: its `name`, else `<session>` or `<session>@<segment>`. */
export function internalCaseName(evalCase: InternalCase): string {
  if (evalCase.name !== undefined) return evalCase.name;
  return evalCase.segmentId === undefined
    ? evalCase.sessionId
    : `${evalCase.sessionId}@${evalCase.segmentId}`;
}

function itemKey(evalCase: InternalCase, index: number): string {
  const digest = createHash("sha256").update(canonicalJson(evalCase)).digest("hex").slice(0, 12);
  return `${String(index + 1).padStart(4, "0")}-${digest}`;
}
