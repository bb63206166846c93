import type { ApprovalRequest } from "@podkit/pod";
import { describe, expect, it } from "vitest";
import { type Approval, interactiveApprover } from "../src/session/approvals.js";

const request = (podPath: string[], tool = "bash"): ApprovalRequest => ({
  callId: `call-${podPath.length}-${tool}`,
  tool,
  arguments: JSON.stringify({ command: "make test" }),
  askedBy: tool,
  podPath,
});

describe("the interactive approver of podkit run", () => {
  it('names a child pod in its question; "always" covers the tool for the pod it was given for', async () => {
    const questions: string[] = [];
    const answers: Approval[] = ["always", "yes"];
    const approver = interactiveApprover({
      ask: async (question) => {
        questions.push(question);
        return answers.shift() ?? "no";
      },
    });
    const signal = new AbortController().signal;
    expect(await approver(request(["root"]), signal)).toMatchObject({ decision: "allow" });
    expect(questions[0]).toBe("Allow bash(make test)? [y]es / [n]o / [a]lways: ");
    // "always" for the root's bash: the root is not asked again…
    expect(await approver(request(["root"]), signal)).toMatchObject({ decision: "allow" });
    expect(questions).toHaveLength(1);
    // …but a child's bash is asked, naming the child.
    expect(await approver(request(["root", "reviewer#1"]), signal)).toMatchObject({ decision: "allow" });
    expect(questions[1]).toBe("root › reviewer#1 asks: Allow bash(make test)? [y]es / [n]o / [a]lways: ");
    // A denial is a denial for the child too.
    expect(await approver(request(["root", "reviewer#1"]), signal)).toMatchObject({ decision: "deny" });
  });
});
