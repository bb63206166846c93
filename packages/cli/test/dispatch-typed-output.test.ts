import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { useDispatchWorlds } from "./support/dispatch-world.js";

// A dispatched run of a pod with `[output]`: its result is the typed answer (docs/output.md, "At
// every door"; docs/dispatch.md). Real child processes, the provider double, real PostgreSQL.

const VERDICT = {
  type: "object",
  properties: { verdict: { type: "string", enum: ["approve", "reject"] }, count: { type: "integer" } },
  required: ["verdict", "count"],
};

const world = useDispatchWorlds(usePostgresDatabases(), {
  extra: '[output]\nschema = "verdict.schema.json"\n',
});

describe("a dispatched run with a typed answer", { timeout: 240_000 }, () => {
  it("stores the checked object as the run's result: runs show prints it, --json and the log carry it", async () => {
    const w = world();
    await writeFile(join(w.ws.workspace, ".podkit", "verdict.schema.json"), JSON.stringify(VERDICT));
    w.double.enqueue(
      { parts: [{ type: "tool_call", name: "count", arguments: {} }] },
      // Wrapped: the run's result is the value as checked, after the normalisation.
      {
        parts: [
          {
            type: "tool_call",
            name: "final_answer",
            arguments: { answer: { verdict: "approve", count: 1 } },
          },
        ],
      },
    );
    const submitted = await w.podkit(["submit", "count once, then give the verdict"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const runId = submitted.stdout.trim();
    const worker = w.worker();

    const run = await w.runIn(runId, "completed");
    expect(run).toMatchObject({ result: "finished", output: { verdict: "approve", count: 1 } });
    const log = run.log as string[];
    expect(log.at(-1)).toContain("ended completed (finished) with a typed answer");
    const ended = worker.events.find((e) => e.event.type === "ended")?.event;
    expect(ended).toMatchObject({ runId, output: { verdict: "approve", count: 1 } });

    const shown = await w.podkit(["runs", "show", runId]);
    expect(shown.code, shown.stderr).toBe(0);
    const line = /^output {5}(\{.*\})$/m.exec(shown.stdout)?.[1] ?? "";
    expect(JSON.parse(line)).toEqual({ verdict: "approve", count: 1 });
    // The session's own record agrees: its final_output entry, as session show reads it.
    const session = await w.podkit(["session", "show", run.sessionId as string, "--json"]);
    const view = JSON.parse(session.stdout) as { segments: { turns: { output?: { value: unknown } }[] }[] };
    expect(view.segments.at(-1)?.turns.at(-1)?.output?.value).toEqual({ verdict: "approve", count: 1 });
  });
});
