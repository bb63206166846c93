import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { FsStore, readSessionView } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import type { PodEvent } from "../src/index.js";
import { sessionEntries, text, toolCall, usePodWorlds } from "./pod-harness.js";
import { useTelemetryCapture } from "./telemetry-harness.js";

// Every decision of the mode, a rule or a hook is a `policy.decision` entry, a pod event and an
// OpenTelemetry span event; `readSessionView` (session show, GET /sessions/:id) returns them.

const world = usePodWorlds();
const capture = useTelemetryCapture();

const SCOPED = `[tools]\nbash = true\n[[scope.allow]]\ntarget = ".."\npermission = "write"\n`;

async function decisionsIn(workspace: string): Promise<Record<string, unknown>[]> {
  return (await sessionEntries(workspace)).flatMap((e) =>
    e.kind === "extension" && e.domain === "policy.decision" ? [e.payload as Record<string, unknown>] : [],
  );
}

describe("decisions in the log", () => {
  it("a deny rule's decision names the call, the rule, who decided and the outcome; without the rule there is none", async () => {
    const rule = `[[permissions.rule]]\ntool = "bash"\nargs = { command = "rm *" }\naction = "deny"\nreason = "nothing is removed"\n`;
    const w = await world({ manifestExtra: SCOPED + rule });
    const telemetry = capture();
    const events: PodEvent[] = [];
    const pod = await w.pod({ mode: "bypass", telemetry: telemetry.options });
    pod.subscribe((event) => events.push(event));
    w.double.enqueue(toolCall("bash", { command: "rm README.md" }, "toolu_d1"), text("ok"));
    await pod.run("go");
    expect(await readFile(join(w.workspace, "README.md"), "utf8")).toBe("readme\n");
    const expected = {
      decided_by: "rule",
      outcome: "deny",
      call_id: "toolu_d1",
      tool: "bash",
      pod_path: ["root"],
      rule: '[[permissions.rule]] tool = "bash" args = { command = "rm *" } action = "deny"',
      reason: "nothing is removed",
    };
    expect(await decisionsIn(w.workspace)).toEqual([expected]);
    expect(events.filter((e) => e.type === "policy_decision")).toEqual([
      { type: "policy_decision", decision: expected },
    ]);
    // The run's span carries it as an event (never the call's arguments).
    const run = telemetry.trees()[0];
    const event = run?.events.find((e) => e.name === "podkit.policy.decision");
    expect(event?.attributes).toMatchObject({
      "podkit.decision.decided_by": "rule",
      "podkit.decision.outcome": "deny",
      "gen_ai.tool.call.id": "toolu_d1",
      "podkit.decision.reason": "nothing is removed",
    });
    expect(JSON.stringify(event?.attributes)).not.toContain("README");
    // The read model that session show and the viewer's API use.
    const store = new FsStore({ root: join(w.workspace, ".podkit", "sessions") });
    const view = await readSessionView(store, pod.sessionId as string);
    expect(view.segments.at(-1)?.turns[0]?.decisions).toEqual([
      {
        decidedBy: "rule",
        outcome: "deny",
        callId: "toolu_d1",
        tool: "bash",
        podPath: ["root"],
        rule: expected.rule,
        reason: "nothing is removed",
        at: expect.any(Number),
      },
    ]);

    const control = await world({ manifestExtra: SCOPED });
    const free = await control.pod({ mode: "bypass" });
    control.double.enqueue(toolCall("bash", { command: "rm README.md" }, "toolu_d1"), text("ok"));
    await free.run("go");
    expect(await decisionsIn(control.workspace)).toEqual([]);
  });

  it("read_only mode: the mode decided", async () => {
    const w = await world({ manifestExtra: SCOPED });
    const pod = await w.pod({ mode: "read_only" });
    w.double.enqueue(toolCall("write_file", { path: "x.txt", content: "x" }, "toolu_m"), text("ok"));
    await pod.run("go");
    expect(await decisionsIn(w.workspace)).toEqual([
      expect.objectContaining({
        decided_by: "mode",
        outcome: "deny",
        call_id: "toolu_m",
        rule: 'mode = "read_only"',
      }),
    ]);
  });

  it("an ask rule is a decision before its approval request; an allow rule that spares an approval is one too", async () => {
    const rules = [
      `[[permissions.rule]]\ntool = "read_file"\naction = "ask"\nreason = "reads are reviewed"\n`,
      `[[permissions.rule]]\ntool = "bash"\nargs = { command = "true" }\naction = "allow"\n`,
    ].join("");
    const w = await world({ manifestExtra: SCOPED + rules });
    const pod = await w.pod();
    w.double.enqueue(
      toolCall("bash", { command: "true" }, "toolu_a"),
      toolCall("read_file", { path: "README.md" }, "toolu_q"),
    );
    expect((await pod.run("go")).status).toBe("awaiting_approval");
    const entries = await sessionEntries(w.workspace);
    const kinds = entries.map((e) =>
      e.kind === "extension" ? `${e.domain}:${(e.payload as { outcome?: string }).outcome}` : e.kind,
    );
    // The allowed bash ran without asking; the read asked, its decision first.
    expect(kinds.indexOf("policy.decision:allow")).toBeGreaterThan(-1);
    expect(kinds.indexOf("policy.decision:ask")).toBeLessThan(kinds.indexOf("approval_requested"));
    expect(await decisionsIn(w.workspace)).toEqual([
      expect.objectContaining({ decided_by: "rule", outcome: "allow", call_id: "toolu_a" }),
      expect.objectContaining({
        decided_by: "rule",
        outcome: "ask",
        call_id: "toolu_q",
        reason: "reads are reviewed",
      }),
    ]);
  });

  it("a hook's deny is a decision of the hook", async () => {
    const w = await world({ manifestExtra: SCOPED });
    const pod = await w.pod({ autoApprove: true });
    pod.addHooks({
      preToolCall: (call) =>
        call.name === "bash" ? { action: "deny", reason: "no shell today" } : { action: "continue" },
    });
    w.double.enqueue(toolCall("bash", { command: "touch made" }, "toolu_h"), text("ok"));
    await pod.run("go");
    await expect(readFile(join(w.workspace, "made"))).rejects.toThrow();
    expect(await decisionsIn(w.workspace)).toEqual([
      expect.objectContaining({
        decided_by: "hook",
        outcome: "deny",
        call_id: "toolu_h",
        reason: "no shell today",
      }),
    ]);
  });
});

describe.skipIf(process.platform !== "linux")("containment's refusals in the log", () => {
  const DENY_ENV = `${SCOPED}[[scope.deny]]\ntarget = "../.env"\npermission = "read"\n`;
  const CALLS = [
    toolCall("read_file", { path: ".env" }, "toolu_c1"),
    toolCall("bash", { command: "cat .env" }, "toolu_c2"),
    toolCall("bash", { command: "python3 -c 'print(open(\".env\").read())'" }, "toolu_c3"),
    toolCall("bash", { command: "cp .env ../leaked" }, "toolu_c4"),
    text("done"),
  ];

  it("with deny .env, read_file, cat, python and cp each fail with the denial in the log; positive control: without the rule the secret is read", async () => {
    const w = await world({ manifestExtra: DENY_ENV, files: { "project/.env": "SECRET=hunter2\n" } });
    const pod = await w.pod({ mode: "bypass" });
    w.double.enqueue(...CALLS);
    await pod.run("leak it");
    const decisions = await decisionsIn(w.workspace);
    expect(decisions.map((d) => [d.call_id, d.decided_by, d.outcome])).toEqual([
      ["toolu_c1", "scope", "deny"],
      ["toolu_c2", "sandbox", "deny"],
      ["toolu_c3", "sandbox", "deny"],
      ["toolu_c4", "sandbox", "deny"],
    ]);
    for (const decision of decisions) expect(decision.rule).toContain(".env");
    expect(JSON.stringify(await sessionEntries(w.workspace))).not.toContain("hunter2");
    await expect(readFile(join(w.root, "leaked"))).rejects.toThrow();

    const control = await world({ manifestExtra: SCOPED, files: { "project/.env": "SECRET=hunter2\n" } });
    const free = await control.pod({ mode: "bypass" });
    control.double.enqueue(...CALLS);
    await free.run("leak it");
    expect(await decisionsIn(control.workspace)).toEqual([]);
    expect(JSON.stringify(await sessionEntries(control.workspace))).toContain("hunter2");
  });
});
