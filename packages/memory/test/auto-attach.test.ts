import { execFile } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { MemoryPackageInvalidError } from "@podkit/pod";
import { describe, expect, it } from "vitest";
import { say } from "./helpers.js";
import { jobEvents, usePodWorlds } from "./pod-helpers.js";

const world = usePodWorlds();
const run = promisify(execFile);
const memoryPackageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Installs this package in the workspace, as `npm install @podkit/memory` would (a link to it). */
async function installMemory(workspace: string): Promise<void> {
  await mkdir(join(workspace, "node_modules", "@podkit"), { recursive: true });
  await symlink(memoryPackageDir, join(workspace, "node_modules", "@podkit", "memory"), "dir");
}

const podDist = join(memoryPackageDir, "node_modules", "@podkit", "pod", "dist", "index.js");
const manifestDist = join(memoryPackageDir, "node_modules", "@podkit", "manifest", "dist", "index.js");

/**
 * Builds a pod on `workspace`'s manifest in a child process resolving packages as in a user's
 * project: without the NODE_PATH pnpm's bin shims give the test runner (it lists the monorepo's
 * virtual store, where every workspace package is found).
 */
async function probe(
  workspace: string,
): Promise<{ outcome?: string; missing?: boolean; message?: string; hint?: string }> {
  const script = join(workspace, "..", "probe.mjs");
  await writeFile(
    script,
    `const { loadManifest } = await import(${JSON.stringify(manifestDist)});
const { Pod, MemoryPackageMissingError } = await import(${JSON.stringify(podDist)});
const loaded = await loadManifest({ env: { cwd: ${JSON.stringify(workspace)}, home: ${JSON.stringify(join(workspace, ".."))}, env: {} } });
try {
  const pod = await Pod.fromManifest(loaded, { env: {}, onWarning: () => {} });
  await pod.close();
  console.log(JSON.stringify({ outcome: "pod" }));
} catch (error) {
  console.log(JSON.stringify({ missing: MemoryPackageMissingError.isInstance(error), message: error.message, hint: error.hint }));
}
`,
  );
  const { NODE_PATH: _, ...env } = process.env;
  const { stdout } = await run(process.execPath, [script], { env });
  return JSON.parse(stdout);
}

const toolsOf = (request: { body: { tools?: { name: string }[] } } | undefined) =>
  (request?.body.tools ?? []).map((tool) => tool.name);

describe("a [memory] manifest gets memory from the pod, found as an optional package", () => {
  it("the pod attaches memory installed in the workspace, on a new pod and on a restored one; attachMemory: false leaves it to the caller", async () => {
    const w = await world("[memory]\nextract_threshold = 1000000\ntools = true");
    await installMemory(w.workspace);
    // Positive control: without the pod's attach there is no memory tool and no memory job.
    const plain = await w.pod();
    w.double.enqueue(say("Plain."));
    await plain.run("hello").result;
    expect(toolsOf(w.double.requests[0])).not.toContain("memory_query");

    const pod = await w.pod({ attachMemory: true });
    w.double.enqueue(say("Hi."));
    await pod.run("hello").result;
    expect(toolsOf(w.double.requests[1])).toEqual(
      expect.arrayContaining(["knowledge_read", "memory_query", "memory_read"]),
    );
    // The memory job runs at close (runOnClose: the session's tail), so it was attached.
    w.double.enqueue({ parts: [{ type: "text", text: "nothing" }] });
    await pod.close();
    expect(jobEvents(w.events)).toContain("extract:start");

    const restored = await w.restore(pod.sessionId ?? "", { attachMemory: true });
    w.double.enqueue(say("Again."));
    await restored.run("once more").result;
    expect(toolsOf(w.double.requests.at(-1))).toContain("memory_query");
  });

  it("uses the application's copy of the package when it passes one (a globally installed CLI)", async () => {
    const w = await world("[memory]\nextract_threshold = 1000000\ntools = true");
    let imported = 0;
    const pod = await w.pod({
      attachMemory: true,
      packages: {
        "@podkit/memory": () => {
          imported += 1;
          return import("../src/index.js");
        },
      },
    });
    expect(imported).toBe(1);
    w.double.enqueue(say("Hi."));
    await pod.run("hello").result;
    expect(toolsOf(w.double.requests[0])).toContain("memory_query");
  });

  it("a missing package is a typed error naming the [memory] table and where it looked; without [memory] nothing is looked up", async () => {
    const w = await world("[memory]\nextract_threshold = 1000000");
    const missing = await probe(w.workspace);
    expect(missing.missing).toBe(true);
    expect(missing.message).toContain("[memory]");
    expect(missing.message).toContain(join(w.workspace, ".podkit", "manifest.toml"));
    expect(missing.message).toContain(join(w.workspace, "node_modules", "@podkit", "memory"));
    expect(missing.hint).toContain("npm install @podkit/memory");
    // Positive control: the same probe finds the package once the workspace installs it.
    await installMemory(w.workspace);
    expect(await probe(w.workspace)).toEqual({ outcome: "pod" });

    const off = await world("");
    expect(await probe(off.workspace)).toEqual({ outcome: "pod" });
  });

  it("a package without attachMemory is a typed error, not a crash", async () => {
    const w = await world("[memory]\nextract_threshold = 1000000");
    const fake = join(w.workspace, "node_modules", "@podkit", "memory");
    await mkdir(fake, { recursive: true });
    await writeFile(
      join(fake, "package.json"),
      '{"name":"@podkit/memory","type":"module","main":"index.js"}',
    );
    await writeFile(join(fake, "index.js"), "export const somethingElse = 1;\n");
    const error = await w.pod({ attachMemory: true }).catch((e: unknown) => e);
    expect(MemoryPackageInvalidError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("does not export attachMemory");
  });
});
