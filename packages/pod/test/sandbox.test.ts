import { existsSync } from "node:fs";
import { join } from "node:path";
import { SANDBOX_PROBE_DOMAIN, SandboxUnavailableError } from "@podkit/tools";
import { describe, expect, it } from "vitest";
import { caught } from "./helpers.js";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, TREE_MANIFEST, toolResults } from "./subpods-harness.js";

const world = usePodWorlds();
// Real bubblewrap on Linux (CI installs it: .ci/run); elsewhere the OS backend is another one.
const LINUX = process.platform === "linux";
const approveAll = () => ({ decision: "allow" as const, by: "test" });

/** The tree of the sub-pod tests, with bash on at the root and lent to both roles. */
const SHELL_TREE = `${TREE_MANIFEST}
[tools]
bash = true
[subpods.worker.tools]
bash = true
[subpods.reviewer.tools]
bash = true
`;

/** The root spawns `role`, whose model runs one bash command that writes into src/. */
function spawnsAWriter(role: "worker" | "reviewer") {
  const prompt = role === "worker" ? "WORKER" : "REVIEWER";
  return routeBySystemPrompt({
    ROOT: [toolCall("spawn_pod", { role, task: "write it" }, "call-root"), text("root done")],
    [prompt]: [
      toolCall("bash", { command: "echo written-by-the-child > src/owned.txt; echo exit=$?" }, "call-bash"),
      text("child done"),
    ],
  });
}

describe.skipIf(!LINUX)("sub-pods: the sandbox is built from the loan", () => {
  it("a read-only sub-pod's bash cannot write; positive control: the writable role's bash can", async () => {
    const readOnly = spawnsAWriter("reviewer");
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: SHELL_TREE,
      files: { "project/src/a.ts": "export {}\n" },
      double: { respond: readOnly.respond },
    });
    const root = await w.pod({ approver: approveAll });
    expect((await root.run("go").result).text).toBe("root done");
    const reviewerLog = [...(await entriesBySession(w.workspace)).values()].find(
      (entries) => entries[0]?.kind === "segment_start" && entries[0].parent?.role === "reviewer",
    );
    const [refused] = toolResults(reviewerLog ?? []);
    expect(refused?.summary).toBe("exit code 0");
    const output = JSON.stringify(reviewerLog?.filter((entry) => entry.kind === "tool_result"));
    expect(output).toContain("Read-only file system");
    expect(output).toContain("exit=1");
    expect(existsSync(join(w.workspace, "src/owned.txt"))).toBe(false);
    // The child's log says which sandbox it ran in.
    expect(reviewerLog?.find((entry) => entry.kind === "extension")).toMatchObject({
      domain: SANDBOX_PROBE_DOMAIN,
      payload: { backend: "bwrap", active: true, network: [], degraded: [] },
    });

    const writable = spawnsAWriter("worker");
    const control = await world({
      systemPrompt: "ROOT",
      manifestExtra: SHELL_TREE,
      files: { "project/src/a.ts": "export {}\n" },
      double: { respond: writable.respond },
    });
    const controlRoot = await control.pod({ approver: approveAll });
    expect((await controlRoot.run("go").result).text).toBe("root done");
    expect(existsSync(join(control.workspace, "src/owned.txt"))).toBe(true);

    // And without the sandbox the read-only child's bash does write: the scope alone never stopped it.
    const unsandboxed = spawnsAWriter("reviewer");
    const bare = await world({
      systemPrompt: "ROOT",
      manifestExtra: `${SHELL_TREE}[sandbox]\nbackend = "none"\n`,
      files: { "project/src/a.ts": "export {}\n" },
      double: { respond: unsandboxed.respond },
    });
    expect((await (await bare.pod({ approver: approveAll })).run("go").result).text).toBe("root done");
    expect(existsSync(join(bare.workspace, "src/owned.txt"))).toBe(true);
  });

  it("writes the probe right after a new session's start, and again when a restored pod starts", async () => {
    const w = await world({
      manifestExtra: `[[scope.allow]]\ntarget = ".."\npermission = "write"\n[tools]\nbash = true\n`,
    });
    w.double.enqueue(text("one"), text("two"));
    const pod = await w.pod();
    await pod.run("hi").result;
    const sessionId = pod.sessionId as string;
    await pod.close();
    const restored = await w.restore(sessionId);
    await restored.run("again").result;
    const entries = (await entriesBySession(w.workspace)).get(sessionId) ?? [];
    const kinds = entries.map((entry) =>
      entry.kind === "extension" ? `extension:${entry.domain}` : entry.kind,
    );
    expect(kinds.slice(0, 2)).toEqual(["segment_start", `extension:${SANDBOX_PROBE_DOMAIN}`]);
    // The restored pod's probe comes after its run opened (invoke, input), before its request.
    const second = kinds.lastIndexOf(`extension:${SANDBOX_PROBE_DOMAIN}`);
    expect(kinds.slice(second - 2, second + 2)).toEqual([
      "invoke",
      "user_input",
      `extension:${SANDBOX_PROBE_DOMAIN}`,
      "llm_usage",
    ]);
  });

  it("a pod without bash or a stdio server writes no probe", async () => {
    const w = await world({ manifestExtra: `[[scope.allow]]\ntarget = ".."\npermission = "write"\n` });
    w.double.enqueue(text("one"));
    const pod = await w.pod();
    await pod.run("hi").result;
    const entries = (await entriesBySession(w.workspace)).get(pod.sessionId as string) ?? [];
    expect(entries.some((entry) => entry.kind === "extension" && entry.domain === SANDBOX_PROBE_DOMAIN)).toBe(
      false,
    );
  });
});

describe.skipIf(!LINUX)("a pod whose sandbox cannot run (bubblewrap missing)", () => {
  it("refuses to start with bash on and bubblewrap missing; positive control: backend none starts", async () => {
    const bash = `[[scope.allow]]\ntarget = ".."\npermission = "write"\n[tools]\nbash = true\n`;
    const w = await world({ manifestExtra: bash });
    const env = { ANTHROPIC_API_KEY: "test-key", PATH: "/nonexistent-bin" };
    const error = await caught(w.pod({ env }));
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect(error.message).toContain("bubblewrap (bwrap) was not found on PATH (/nonexistent-bin)");
    expect((error as SandboxUnavailableError).hint).toContain("install bubblewrap");

    const off = await world({ manifestExtra: `${bash}[sandbox]\nbackend = "none"\n` });
    await expect(off.pod({ env })).resolves.toBeDefined();
  });
});

describe.skipIf(!LINUX)("escalation: a command leaves the sandbox only after an approval naming why", () => {
  const ESCALATE = (file: string) =>
    toolCall(
      "bash",
      { command: `echo out > ${file}`, escalate: { reason: "write the report next to the project" } },
      "call-esc",
    );

  it("asks even in bypass mode with every approval automatic; allowed, the command runs outside", async () => {
    const w = await world({ manifestExtra: "[tools]\nbash = true\n" });
    const outside = join(w.root, "report.txt");
    const asked: { askedBy: string; reason?: string }[] = [];
    const pod = await w.pod({
      mode: "bypass",
      autoApprove: true,
      approver: (request) => {
        asked.push({
          askedBy: request.askedBy,
          ...(request.reason === undefined ? {} : { reason: request.reason }),
        });
        return { decision: "allow", by: "ada" };
      },
    });
    w.double.enqueue(ESCALATE(outside), text("done"));
    expect((await pod.run("go").result).text).toBe("done");
    expect(asked).toEqual([
      { askedBy: "sandbox", reason: "to run outside the sandbox: write the report next to the project" },
    ]);
    expect(existsSync(outside)).toBe(true);
    const entries = [...(await entriesBySession(w.workspace)).values()][0] ?? [];
    expect(entries.find((e) => e.kind === "extension" && e.domain === "policy.decision")).toMatchObject({
      payload: {
        decided_by: "sandbox",
        outcome: "ask",
        rule: "escalation",
        reason: "write the report next to the project",
      },
    });
    expect(entries.find((e) => e.kind === "approval_answered")).toMatchObject({
      decision: "allow",
      by: "ada",
    });
  });

  it("denied, nothing runs; positive control: the same command without escalate stays inside and fails", async () => {
    const w = await world({ manifestExtra: "[tools]\nbash = true\n" });
    const outside = join(w.root, "report.txt");
    const pod = await w.pod({ approver: () => ({ decision: "deny", by: "ada", reason: "no" }) });
    w.double.enqueue(ESCALATE(outside), text("done"));
    await pod.run("go").result;
    expect(existsSync(outside)).toBe(false);

    const inside = await world({ manifestExtra: "[tools]\nbash = true\n" });
    const insideOut = join(inside.root, "report.txt");
    const plain = await inside.pod({ approver: approveAll });
    inside.double.enqueue(
      toolCall("bash", { command: `echo out > ${insideOut}` }, "call-plain"),
      text("done"),
    );
    await plain.run("go").result;
    expect(existsSync(insideOut)).toBe(false);
  });

  it("a sub-pod cannot ask: its escalation is denied before anyone is asked", async () => {
    const script = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "worker", task: "escalate" }, "call-root"), text("root done")],
      WORKER: [
        toolCall(
          "bash",
          { command: "echo out > ../../escaped.txt", escalate: { reason: "I need more" } },
          "call-child",
        ),
        text("child done"),
      ],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: SHELL_TREE,
      double: { respond: script.respond },
    });
    const asked: string[] = [];
    const root = await w.pod({
      approver: (request) => {
        asked.push(request.askedBy);
        return { decision: "allow", by: "ada" };
      },
    });
    expect((await root.run("go").result).text).toBe("root done");
    // The root's spawn and the child's bash were asked about by the builtin policy; never the escalation.
    expect(asked).not.toContain("sandbox");
    const child = [...(await entriesBySession(w.workspace)).values()].find(
      (entries) => entries[0]?.kind === "segment_start" && entries[0].parent?.role === "worker",
    );
    expect(child?.find((e) => e.kind === "extension" && e.domain === "policy.decision")).toMatchObject({
      payload: { decided_by: "sandbox", outcome: "deny", rule: "no escalation from a sub-pod's sandbox" },
    });
    expect(existsSync(join(w.root, "escaped.txt"))).toBe(false);
  });
});
