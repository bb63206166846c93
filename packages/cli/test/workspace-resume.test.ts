import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { http } from "../../serve/test/support/sse-client.js";
import { runBin } from "./run-bin.js";
import { startServe } from "./support/serve-process.js";

// Where the workspace is, what a command may create, and what a session remembers of how it was
// started (`-m`, `--set`), through the real `podkit` bin against the provider double.

let double: ProviderDouble;
let root: string;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-ws-")));
  await mkdir(join(root, "home"));
  await mkdir(join(root, "repo", "other"), { recursive: true });
  await writeFile(join(root, "repo", "README.md"), "hello\n");
  await writeFile(
    join(root, "repo", "other", "pod.toml"),
    ['[pod]\nname = "other"', '[model]\nref = "anthropic/claude-sonnet-4-5"', ""].join("\n"),
  );
});
afterEach(async () => {
  await double.close();
  await rm(root, { recursive: true, force: true });
});

const env = () => ({ HOME: join(root, "home"), ANTHROPIC_API_KEY: "test-key" });
const podkit = (cwd: string, ...args: string[]) => runBin(args, { cwd, env: env() });
const answer = (text: string) => double.enqueue({ parts: [{ type: "text", text }] });
const sessionOf = (stderr: string) => /continue it with: podkit resume (\S+)/.exec(stderr)?.[1] as string;

describe("podkit run -m <file> in a directory without .podkit/", () => {
  it("creates nothing there; the session lives under the user state dir and every later command finds it", async () => {
    const repo = join(root, "repo");
    answer("first answer");
    const run = await podkit(
      repo,
      "run",
      "-m",
      "other/pod.toml",
      "--set",
      `model.base_url=${double.baseUrl}`,
      "hi",
    );
    expect(run.stderr).toContain("continue it with: podkit resume");
    expect(run.code).toBe(0);
    expect((await readdir(repo)).sort()).toEqual(["README.md", "other"]);
    expect(existsSync(join(root, "home", ".local", "state", "podkit", "workspaces"))).toBe(true);
    const id = sessionOf(run.stderr);

    // Listing and showing need no manifest: the workspace's store is found without one.
    const list = await podkit(repo, "session", "list");
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id);
    expect((await podkit(repo, "session", "show", id)).stdout).toContain("first answer");

    // `resume` reaches the same server without repeating --set (the printed line works as printed).
    answer("second answer");
    const resumed = await podkit(repo, "resume", id, "again");
    expect(resumed.stderr).toContain(
      `using the manifest session ${id} was started with: -m other/pod.toml --set model.base_url=${double.baseUrl}`,
    );
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("second answer");
    expect(double.requests).toHaveLength(2);
    // The second request continues the first byte for byte (same pod, same system prompt).
    const [first, second] = double.requests as { body: { system: unknown } }[];
    expect(JSON.stringify(second?.body.system)).toBe(JSON.stringify(first?.body.system));
    expect((await readdir(repo)).sort()).toEqual(["README.md", "other"]);
  });

  it("podkit serve continues such a session with what it recorded, like resume", async () => {
    const repo = join(root, "repo");
    answer("first answer");
    const run = await podkit(
      repo,
      "run",
      "-m",
      "other/pod.toml",
      "--set",
      `model.base_url=${double.baseUrl}`,
      "hi",
    );
    expect(run.code).toBe(0);
    const id = sessionOf(run.stderr);
    // The server is started with the manifest alone: its own pods would have no base_url.
    const serve = await startServe(repo, env(), ["-m", "other/pod.toml"]);
    try {
      answer("served answer");
      const next = await http(`${serve.url}/sessions/${id}/messages`, {
        json: { message: "again", wait: true },
      });
      expect(next.body).toMatchObject({ status: "finished", text: "served answer" });
      expect(double.requests).toHaveLength(2);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect((await readdir(repo)).sort()).toEqual(["README.md", "other"]);
  }, 60_000);

  it("says so when resume is given other overlays than the session was started with, and uses those given", async () => {
    const repo = join(root, "repo");
    answer("one");
    const run = await podkit(
      repo,
      "run",
      "-m",
      "other/pod.toml",
      "--set",
      `model.base_url=${double.baseUrl}`,
      "hi",
    );
    expect(run.code).toBe(0);
    const id = sessionOf(run.stderr);
    answer("two");
    const resumed = await podkit(
      repo,
      "resume",
      id,
      "-m",
      "other/pod.toml",
      "--set",
      `model.base_url=${double.baseUrl}/`,
      "--set",
      "worker.max_turns=7",
      "again",
    );
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(
      `warning: session ${id} was started with -m other/pod.toml --set model.base_url=`,
    );
    expect(resumed.stderr).toContain("as given");
  });

  it("never takes overlays that widen what the pod may do from the log; it says how to repeat them", async () => {
    const repo = join(root, "repo");
    answer("one");
    const run = await podkit(
      repo,
      "run",
      "-m",
      "other/pod.toml",
      "--set",
      `model.base_url=${double.baseUrl}`,
      "--set",
      "tools.bash=true",
      "--yes",
      "hi",
    );
    expect(run.code).toBe(0);
    const id = sessionOf(run.stderr);
    // Positive control: the first run had bash.
    const tools = (n: number) =>
      ((double.requests[n] as { body: { tools?: { name: string }[] } }).body.tools ?? []).map((t) => t.name);
    expect(tools(0)).toContain("bash");
    answer("two");
    const resumed = await podkit(repo, "resume", id, "again");
    expect(resumed.stderr).toContain("not reusing --set tools.bash=true from the session's log");
    // The restored pod's tool list is the manifest's (no bash), so the request says so.
    expect(resumed.code).toBe(0);
    expect(tools(1)).not.toContain("bash");
  });

  it("keeps a first request that failed as a session marked failed in the listing", async () => {
    const repo = join(root, "repo");
    const run = await podkit(
      repo,
      "run",
      "-m",
      "other/pod.toml",
      "--set",
      "model.base_url=http://127.0.0.1:9/v1",
      "hi",
    );
    expect(run.code).toBe(1);
    const id = /session (\S+) /.exec(run.stderr)?.[1] as string;
    expect(run.stderr).toContain("its turn failed (your message is kept) · continue it with: podkit resume");
    const list = await podkit(repo, "session", "list");
    expect(list.stdout).toMatch(new RegExp(`${id}.*failed`));
    expect((await readdir(repo)).sort()).toEqual(["README.md", "other"]);
  });
});

describe("the workspace", () => {
  it("is found like git finds a repository, or given with --workspace before or after the command", async () => {
    const repo = join(root, "repo");
    const init = await podkit(root, "--workspace", "repo", "init", "--model", "anthropic/claude-sonnet-4-5");
    expect(init.code).toBe(0);
    expect(existsSync(join(repo, ".podkit", "manifest.toml"))).toBe(true);
    expect(existsSync(join(root, ".podkit"))).toBe(false);
    // From a subdirectory the manifest of the nearest ancestor with .podkit/ is used.
    await mkdir(join(repo, "src", "deep"), { recursive: true });
    const shown = await podkit(join(repo, "src", "deep"), "manifest", "show", "--json");
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).workspace ?? shown.stdout).toContain(repo);
    const elsewhere = await podkit(root, "session", "list", "--workspace", repo);
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.stdout).toContain("no sessions yet");
  });

  it("refuses a --workspace that is not a directory, with a hint", async () => {
    const result = await podkit(root, "--workspace", "missing", "session", "list");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: workspace .*missing is not a directory\nhint: /);
  });

  it("refuses [memory] in a workspace without .podkit/ instead of creating one", async () => {
    const repo = join(root, "repo");
    await writeFile(
      join(repo, "other", "memory.toml"),
      '[pod]\nname = "m"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n[memory]\n',
    );
    const result = await podkit(
      repo,
      "run",
      "-m",
      "other/memory.toml",
      "--set",
      `model.base_url=${double.baseUrl}`,
      "hi",
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("has no .podkit/ directory");
    expect(result.stderr).toContain("hint: run `podkit init`");
    expect(double.requests).toHaveLength(0);
    expect((await readdir(repo)).sort()).toEqual(["README.md", "other"]);
  });
});
