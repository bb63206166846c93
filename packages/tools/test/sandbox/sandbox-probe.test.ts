import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { loadManifest } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import { loadToolPackages, SandboxUnavailableError, type ToolWarning } from "../../src/index.js";
import { MINIMAL, tempRoot } from "../helpers.js";
import { bash, LINUX, processesRunning, sandboxPod } from "./support.js";

/** Loads the tools of a manifest with bash on, given the pod environment `env`. */
async function load(sandbox: string, env: Record<string, string | undefined>) {
  const t = await tempRoot();
  const ws = t.path("ws");
  const file = await t.write(
    "ws/pod.toml",
    `${MINIMAL}[[scope.allow]]\ntarget = "."\npermission = "write"\n[tools]\nbash = true\n${sandbox}`,
  );
  const loaded = await loadManifest({ file, env: { cwd: ws, home: join(ws, ".home"), env: {} } });
  const warnings: ToolWarning[] = [];
  const set = loadToolPackages(loaded, { warn: (w) => warnings.push(w), env });
  return { file, set, warnings };
}

const NO_BWRAP = { ...process.env, PATH: "/nonexistent-bin" };

describe.skipIf(!LINUX)("fail_if_unavailable", () => {
  it("refuses to start, naming bwrap, PATH and the key, when bubblewrap is missing", async () => {
    const { set } = await load("", NO_BWRAP);
    const error = await set.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    const refused = error as SandboxUnavailableError;
    expect(refused.errorKind).toBe("unsupported");
    expect(refused.keyPath).toBe("sandbox.fail_if_unavailable");
    expect(refused.message).toBe(
      "the OS sandbox cannot run: bubblewrap (bwrap) was not found on PATH (/nonexistent-bin); [sandbox] fail_if_unavailable is on (the default while [tools] bash is on), so the pod does not start",
    );
    expect(refused.hint).toContain("install bubblewrap");
    expect(refused.hint).toContain('[sandbox] backend = "none"');
  });

  it("names the manifest file that set it", async () => {
    const { set, file } = await load("[sandbox]\nfail_if_unavailable = true\n", NO_BWRAP);
    await expect(set).rejects.toMatchObject({ file, message: expect.stringContaining(`(set in ${file})`) });
  });

  it("positive control: with bubblewrap on PATH the same manifest starts, and says so in its probe", async () => {
    const { set, warnings } = await load("", process.env);
    const tools = await set;
    expect(warnings).toEqual([]);
    const version = /bubblewrap (\S+)/.exec(
      spawnSync("bwrap", ["--version"], { encoding: "utf8" }).stdout,
    )?.[1];
    expect(tools.sandboxProbe()).toEqual({
      backend: "bwrap",
      version,
      active: true,
      network: [],
      degraded: [],
    });
    await tools.close();
  });

  it("off: starts with a warning, and the probe and bash's description say the sandbox is missing", async () => {
    const { set, warnings } = await load("[sandbox]\nfail_if_unavailable = false\n", NO_BWRAP);
    const tools = await set;
    expect(warnings).toEqual([
      {
        code: "sandbox.unavailable",
        source: "sandbox",
        message:
          "the OS sandbox cannot run (bubblewrap (bwrap) was not found on PATH (/nonexistent-bin)); with [sandbox] fail_if_unavailable = false, the processes this pod starts run without one, with the user's full authority",
      },
    ]);
    expect(tools.sandboxProbe()).toEqual({
      backend: "bwrap",
      version: null,
      active: false,
      network: [],
      degraded: [
        "bubblewrap (bwrap) was not found on PATH (/nonexistent-bin): processes run without a sandbox",
      ],
    });
    await tools.close();
  });

  it("backend none: starts without probing bubblewrap, and the probe says none", async () => {
    const { set, warnings } = await load('[sandbox]\nbackend = "none"\n', NO_BWRAP);
    const tools = await set;
    expect(warnings).toEqual([]);
    expect(tools.sandboxProbe()).toEqual({
      backend: "none",
      version: null,
      active: false,
      network: [],
      degraded: [],
    });
    await tools.close();
  });
});

describe.skipIf(!LINUX)("bash in the sandbox", () => {
  it("describes its sandbox to the model; without one it warns instead", async () => {
    const sandboxed = await sandboxPod({ allow: ["api.example.com"] });
    const described = sandboxed.tools.server.definitions().find((d) => d.name === "bash")?.description;
    expect(described).toContain("Commands run in a sandbox built from the file-system scope");
    expect(described).toContain("network access only to api.example.com");
    const bare = await sandboxPod({ backend: "none" });
    expect(bare.tools.server.definitions().find((d) => d.name === "bash")?.description).toContain(
      "WARNING: this tool is not confined by the file-system scope",
    );
  });

  it("nothing a command starts outlives it, not even a setsid escape; positive control: without the sandbox setsid escapes", async () => {
    // Each command gives its setsid half a second to leave the process group before the shell ends.
    const unsandboxed = await sandboxPod({ backend: "none" });
    const escaped = ["sleep", "417.25"];
    await bash(
      unsandboxed.tools,
      `setsid ${escaped.join(" ")} > /dev/null 2>&1 < /dev/null & sleep 0.5; echo started`,
    );
    await new Promise((r) => setTimeout(r, 300));
    const survivors = await processesRunning(escaped);
    expect(survivors).toHaveLength(1);
    for (const pid of survivors) process.kill(pid, "SIGKILL");

    const { tools } = await sandboxPod();
    const contained = ["sleep", "418.25"];
    const result = await bash(
      tools,
      `setsid ${contained.join(" ")} > /dev/null 2>&1 < /dev/null & sleep 0.5; echo started`,
    );
    expect(result.output).toBe("started\n");
    await new Promise((r) => setTimeout(r, 300));
    expect(await processesRunning(contained)).toEqual([]);
    // And on timeout, the command and its children are gone too.
    const stuck = ["sleep", "419.25"];
    const timedOut = await bash(tools, `${stuck.join(" ")} & ${stuck.join(" ")}`, 1500);
    expect(timedOut.summary).toContain("timed out after 1500 ms");
    await new Promise((r) => setTimeout(r, 300));
    expect(await processesRunning(stuck)).toEqual([]);
  });
});
