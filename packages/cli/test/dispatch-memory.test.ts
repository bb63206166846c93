import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { useDispatchWorlds } from "./support/dispatch-world.js";

// `[memory]` under `podkit submit` and `podkit worker`, in a workspace outside the repository that
// installs no @podkit/memory: the pod attaches the CLI's own copy, once (before, every run failed
// until dead-lettered: the package was not found, or memory was attached twice).

const world = useDispatchWorlds(usePostgresDatabases(), { extra: "[memory]\nextract_threshold = 1\n" });

describe("[memory] under submit and worker", { timeout: 300_000 }, () => {
  it("a run of a pod with [memory] completes on a worker, its memory attached once", async () => {
    const w = world();
    // The workspace has no @podkit/memory of its own: only the CLI's copy can serve [memory].
    expect(existsSync(join(w.ws.workspace, "node_modules", "@podkit", "memory"))).toBe(false);
    w.double.enqueue(
      { parts: [{ type: "text", text: "done, remembered nothing" }] },
      // The after-turn extract's worker: it writes nothing worth keeping.
      {
        parts: [
          {
            type: "tool_call",
            name: "write_extracted",
            arguments: { decisions: [], discussions: [], attempts: [], requests: [] },
          },
        ],
      },
      { parts: [{ type: "text", text: "nothing to extract" }] },
    );
    const submitted = await w.podkit(["submit", "do the thing"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const runId = submitted.stdout.trim();
    const worker = w.worker();
    const run = await w.until(async () => {
      const shown = JSON.parse((await w.podkit(["runs", "show", runId, "--json"])).stdout) as Record<
        string,
        unknown
      >;
      return ["completed", "dead", "retrying"].includes(shown.state as string) ? shown : undefined;
    });
    expect(run).toMatchObject({ state: "completed", result: "finished", attempts: 1 });
    const stderr = worker.stderr.join("");
    expect(stderr).not.toContain("already registered");
    expect(stderr).not.toContain("@podkit/memory");
    expect(await readdir(join(w.ws.workspace, ".podkit"))).toContain("memory");
  });
});
