import { spawn } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import { type CapturedRequest, type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { runEval } from "../src/eval/run-eval.js";
import { Pod } from "../src/pod/pod.js";
import { openWorkspaceFsStore } from "../src/pod/store-selection.js";
import { say, scriptedAgent } from "./eval-harness.js";
import { FIXED_CLOCK, useTempDirs, writeFiles } from "./helpers.js";

// Resume after a crash (docs/evals.md): a child process running an eval is SIGKILLed after two of
// four items finished (it imports the built dist: run `pnpm build` first); the rerun with the same
// eval id redoes neither, counted in model requests and in the item files' mtimes.

const CHILD = fileURLToPath(new URL("./crash/eval-child.mjs", import.meta.url));
const INPUTS = ["case one", "case two", "case three", "case four"];
const tempDir = useTempDirs();
const doubles: ProviderDouble[] = [];
afterEach(async () => {
  for (const double of doubles.splice(0)) await double.close();
});

const inputOf = (request: CapturedRequest): string | undefined =>
  INPUTS.find((input) => request.rawBody.includes(`"text":"${input}"`));

describe("an eval killed halfway", () => {
  it("reruns with the same eval id without redoing a finished item", async () => {
    const root = await tempDir("eval-kill");
    const workspace = join(root, "project");
    const home = join(root, "home");
    await writeFiles(root, {
      "project/.podkit/manifest.toml": `[pod]\nname = "kill"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n[worker]\nsystem_prompt = "date={{ date }}"\n`,
    });
    const env = { cwd: workspace, home, env: {} };
    const loaded: LoadedManifest = await loadManifest({ env });
    const respond = scriptedAgent(
      Object.fromEntries(INPUTS.map((input) => [input, [say(`answer to ${input}`)]])),
    );
    let onRequest: (request: CapturedRequest) => void = () => {};
    const double = await startProviderDouble({
      wire: "anthropic",
      respond: (request) => {
        onRequest(request);
        return respond(request);
      },
    });
    doubles.push(double);
    const options = {
      model: double.baseUrl,
      env: { ANTHROPIC_API_KEY: "test-key" },
      clock: FIXED_CLOCK,
      onWarning: () => {},
    };
    const sessions: string[] = [];
    for (const input of INPUTS) {
      const pod = await Pod.fromManifest(loaded, options);
      await pod.run(input).result;
      sessions.push(pod.sessionId as string);
      await pod.close();
    }
    const recording = double.requests.length;

    const itemsDir = join(loaded.dataDir, "evals", "killed", "items");
    const child = spawn(
      process.execPath,
      [CHILD, workspace, home, double.baseUrl, "killed", JSON.stringify(sessions)],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    // The third item's first request: two items are finished and written; the child dies now.
    onRequest = (request) => {
      if (inputOf(request) === "case three") child.kill("SIGKILL");
    };
    const exit = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.on("exit", (_code, signal) => resolve(signal)),
    );
    expect(exit, output).toBe("SIGKILL");
    expect(output).not.toContain("all done");
    const written = (await readdir(itemsDir)).filter((f) => f.endsWith(".json")).sort();
    expect(written).toHaveLength(2);
    const mtimes = await Promise.all(written.map(async (f) => (await stat(join(itemsDir, f))).mtimeMs));
    const childRequests = double.requests.slice(recording).map(inputOf);
    expect(childRequests).toEqual(["case one", "case two", "case three"]);

    onRequest = () => {};
    const before = double.requests.length;
    const store = openWorkspaceFsStore(loaded.dataDir);
    try {
      const report = await runEval({
        cases: sessions.map((sessionId) => ({ sessionId })),
        store,
        variant: { manifest: loaded, model: double.baseUrl },
        podOptions: { env: options.env, clock: FIXED_CLOCK, onWarning: () => {} },
        evalId: "killed",
      });
      expect(report.items.map((item) => item.resumed)).toEqual([true, true, false, false]);
      expect(report.items.map((item) => item.difference)).toEqual([0, 0, 0, 0]);
    } finally {
      await store.close();
    }
    // Only the unfinished items asked the model; the finished items' files were not rewritten.
    expect(double.requests.slice(before).map(inputOf).sort()).toEqual(["case four", "case three"]);
    expect(await Promise.all(written.map(async (f) => (await stat(join(itemsDir, f))).mtimeMs))).toEqual(
      mtimes,
    );
    expect((await readdir(itemsDir)).filter((f) => f.endsWith(".json"))).toHaveLength(4);
  }, 30_000);
});
