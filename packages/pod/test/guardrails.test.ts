import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { definePodkitToolPackage, type Guardrail, ToolPackageExportError } from "@podkit/tools";
import { describe, expect, it } from "vitest";
import { GuardrailTrippedError } from "../src/index.js";
import { sessionEntries, text, toolCall, usePodWorlds } from "./pod-harness.js";

// Guardrails, a tool-package hook point (docs/permissions.md): input, before a tool, after a tool,
// the final answer; allow, reject, feedback or stop — each decision logged, with real tools, real
// files and the provider double's captured requests.

const world = usePodWorlds();

const SCOPED = `[[scope.allow]]\ntarget = ".."\npermission = "write"\n`;

function guarded(...guardrails: Guardrail[]) {
  return definePodkitToolPackage({ name: "guards", tools: () => [], guardrails: () => guardrails });
}

async function decisionsIn(workspace: string): Promise<Record<string, unknown>[]> {
  return (await sessionEntries(workspace)).flatMap((e) =>
    e.kind === "extension" && e.domain === "policy.decision" ? [e.payload as Record<string, unknown>] : [],
  );
}

/** What `work` failed with (undefined when it succeeded). */
async function failureOf(work: PromiseLike<unknown>): Promise<unknown> {
  try {
    await work;
    return undefined;
  } catch (error) {
    return error;
  }
}

/** Every text the model was sent in request `index`, as one string. */
function sent(w: { double: { requests: { rawBody: string }[] } }, index: number): string {
  return w.double.requests[index]?.rawBody ?? "";
}

describe("input guardrails", () => {
  it("hold the request until they pass: nothing is sent while one is still deciding", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let checking!: () => void;
    const started = new Promise<void>((resolve) => {
      checking = resolve;
    });
    const w = await world({
      toolPackages: [
        guarded({
          name: "slow",
          async input() {
            checking();
            await gate;
            return { action: "allow" };
          },
        }),
      ],
    });
    const pod = await w.pod();
    w.double.enqueue(text("hello"));
    const run = pod.run("hi");
    await started;
    // The check is in progress: give the run every chance to race ahead of it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(w.double.requests).toHaveLength(0);
    release();
    expect(await run).toMatchObject({ status: "finished", text: "hello" });
    expect(w.double.requests).toHaveLength(1);
  });

  it("reject: the input never reaches the model or the history; positive control: allowed input does", async () => {
    const w = await world({
      toolPackages: [
        guarded({
          name: "no-secrets",
          input: ({ text }) =>
            text.includes("sk-")
              ? { action: "reject", reason: "the message holds a key" }
              : { action: "allow" },
        }),
      ],
    });
    const pod = await w.pod();
    w.double.enqueue(text("fine"));
    const error = await failureOf(pod.run("my key is sk-123"));
    expect(GuardrailTrippedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ guardrail: "guards/no-secrets", point: "input", outcome: "reject" });
    expect(w.double.requests).toHaveLength(0);
    const entries = await sessionEntries(w.workspace);
    expect(JSON.stringify(entries)).not.toContain("sk-123");
    expect(await decisionsIn(w.workspace)).toEqual([
      {
        decided_by: "guardrail",
        outcome: "reject",
        pod_path: ["root"],
        rule: "guards/no-secrets",
        reason: "the message holds a key",
        point: "input",
      },
    ]);
    // The same pod goes on with an input the guardrail allows.
    expect(await pod.run("hello")).toMatchObject({ status: "finished", text: "fine" });
    expect(sent(w, 0)).toContain("hello");
  });

  it("feedback: the input goes through with the guardrail's note after it", async () => {
    const w = await world({
      toolPackages: [
        guarded({
          name: "pii",
          input: () => ({ action: "feedback", message: "Do not repeat the address." }),
        }),
      ],
    });
    const pod = await w.pod();
    w.double.enqueue(text("ok"));
    await pod.run("I live at 1 Main St");
    const body = sent(w, 0);
    expect(body).toContain("I live at 1 Main St");
    expect(body).toContain("Do not repeat the address.");
    expect(body.indexOf("Do not repeat")).toBeGreaterThan(body.indexOf("1 Main St"));
  });
});

describe("tool guardrails", () => {
  it("before_tool reject: the tool does not run and the model is told; positive control without the guardrail it writes", async () => {
    const guard = guarded({
      name: "no-env",
      beforeTool: (call) =>
        call.arguments.includes(".env")
          ? { action: "reject", reason: "env files are off limits" }
          : { action: "allow" },
    });
    const w = await world({ manifestExtra: SCOPED, toolPackages: [guard] });
    const pod = await w.pod({ mode: "bypass" });
    w.double.enqueue(toolCall("write_file", { path: ".env", content: "X=1" }, "toolu_g1"), text("ok"));
    await pod.run("go");
    await expect(readFile(join(w.workspace, ".env"))).rejects.toThrow();
    expect(sent(w, 1)).toContain("env files are off limits");
    expect(await decisionsIn(w.workspace)).toEqual([
      expect.objectContaining({
        decided_by: "guardrail",
        outcome: "reject",
        call_id: "toolu_g1",
        tool: "write_file",
        point: "before_tool",
      }),
    ]);

    const control = await world({ manifestExtra: SCOPED });
    const free = await control.pod({ mode: "bypass" });
    control.double.enqueue(toolCall("write_file", { path: ".env", content: "X=1" }, "toolu_g1"), text("ok"));
    await free.run("go");
    expect(await readFile(join(control.workspace, ".env"), "utf8")).toBe("X=1");
  });

  it("before_tool stop: the run ends with GuardrailTrippedError and the tool never ran", async () => {
    const w = await world({
      manifestExtra: SCOPED,
      toolPackages: [guarded({ name: "halt", beforeTool: () => ({ action: "stop", reason: "enough" }) })],
    });
    const pod = await w.pod({ mode: "bypass" });
    w.double.enqueue(toolCall("write_file", { path: "a.txt", content: "a" }, "toolu_s"), text("ok"));
    const error = await failureOf(pod.run("go"));
    expect(error).toMatchObject({ name: "GuardrailTrippedError", point: "before_tool", outcome: "stop" });
    await expect(readFile(join(w.workspace, "a.txt"))).rejects.toThrow();
    expect(await decisionsIn(w.workspace)).toEqual([
      expect.objectContaining({ outcome: "stop", point: "before_tool", call_id: "toolu_s" }),
    ]);
  });

  it("after_tool reject: the model never sees the result; feedback: it sees the result and the note", async () => {
    const w = await world({
      manifestExtra: SCOPED,
      files: { "project/secret.txt": "TOP-SECRET-VALUE\n", "project/plain.txt": "plain words\n" },
      toolPackages: [
        guarded({
          name: "dlp",
          afterTool: (_call, result) =>
            (result.content ?? result.summary).includes("TOP-SECRET")
              ? { action: "reject", reason: "the result holds a secret" }
              : { action: "feedback", message: "Checked by DLP." },
        }),
      ],
    });
    const pod = await w.pod();
    w.double.enqueue(
      toolCall("read_file", { path: "secret.txt" }, "toolu_r1"),
      toolCall("read_file", { path: "plain.txt" }, "toolu_r2"),
      text("done"),
    );
    await pod.run("read both");
    const second = sent(w, 1);
    expect(second).not.toContain("TOP-SECRET-VALUE");
    expect(second).toContain("the result holds a secret");
    const third = sent(w, 2);
    expect(third).toContain("plain words");
    expect(third).toContain("Checked by DLP.");
    // The history holds what the model saw, not the withheld result.
    expect(JSON.stringify(await sessionEntries(w.workspace))).not.toContain("TOP-SECRET-VALUE");
  });

  it("after_tool stop: the result is committed (the tool ran), then the run ends", async () => {
    const w = await world({
      manifestExtra: SCOPED,
      toolPackages: [
        guarded({ name: "once", afterTool: () => ({ action: "stop", reason: "one write is enough" }) }),
      ],
    });
    const pod = await w.pod({ mode: "bypass" });
    w.double.enqueue(toolCall("write_file", { path: "a.txt", content: "a" }, "toolu_as"), text("ok"));
    const error = await failureOf(pod.run("go"));
    expect(error).toMatchObject({ name: "GuardrailTrippedError", point: "after_tool", outcome: "stop" });
    expect(await readFile(join(w.workspace, "a.txt"), "utf8")).toBe("a");
    const entries = await sessionEntries(w.workspace);
    expect(entries.some((e) => e.kind === "tool_result")).toBe(true);
    expect(entries.at(-1)?.kind).toBe("run_errored");
  });
});

describe("final-answer guardrails", () => {
  it("feedback sends the model back to work; the run ends with the answer that passes", async () => {
    const w = await world({
      toolPackages: [
        guarded({
          name: "cite",
          finalAnswer: ({ text }) =>
            text.includes("[source]")
              ? { action: "allow" }
              : { action: "feedback", message: "Cite a source." },
        }),
      ],
    });
    const pod = await w.pod();
    w.double.enqueue(text("It is 42."), text("It is 42 [source]."));
    expect(await pod.run("what is it?")).toMatchObject({ status: "finished", text: "It is 42 [source]." });
    expect(sent(w, 1)).toContain("Cite a source.");
  });

  it("reject ends the run with GuardrailTrippedError: the caller never gets the answer", async () => {
    const w = await world({
      toolPackages: [guarded({ name: "tone", finalAnswer: () => ({ action: "reject", reason: "rude" }) })],
    });
    const pod = await w.pod();
    w.double.enqueue(text("go away"));
    const error = await failureOf(pod.run("hi"));
    expect(error).toMatchObject({ name: "GuardrailTrippedError", point: "final_answer", outcome: "reject" });
  });

  it("a guardrail that throws or answers nonsense stops the run (it fails closed)", async () => {
    const w = await world({
      toolPackages: [
        guarded({
          name: "broken",
          finalAnswer: () => {
            throw new Error("classifier down");
          },
        }),
      ],
    });
    const pod = await w.pod();
    w.double.enqueue(text("answer"));
    await expect(pod.run("hi")).rejects.toMatchObject({ name: "GuardrailTrippedError", outcome: "stop" });
    expect(await decisionsIn(w.workspace)).toEqual([
      expect.objectContaining({ outcome: "stop", reason: "the guardrail failed: classifier down" }),
    ]);

    const odd = await world({
      toolPackages: [guarded({ name: "odd", input: () => ({ action: "maybe" }) as never })],
    });
    const oddPod = await odd.pod();
    await expect(oddPod.run("hi")).rejects.toMatchObject({ name: "GuardrailTrippedError", outcome: "stop" });
    expect(odd.double.requests).toHaveLength(0);
  });
});

describe("guardrail packages", () => {
  it("a package whose guardrails(ctx) returns something else is refused at load, naming it", async () => {
    const w = await world();
    const bad = definePodkitToolPackage({
      name: "bad-guards",
      tools: () => [],
      guardrails: () => [{ name: "x" } as never],
    });
    const error = await failureOf(w.pod({ toolPackages: [bad] }));
    expect(ToolPackageExportError.isInstance(error)).toBe(true);
    expect(String((error as Error).message)).toContain("guardrails(ctx) must return an array of guardrails");
  });
});
