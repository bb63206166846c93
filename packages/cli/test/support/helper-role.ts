import type { ProviderDouble } from "@podkit/testkit";

/** A sub-pod role that may run bash and delegate further (it starts from the workspace's manifest). */
export const HELPER_ROLE = `
[subpods.helper]
description = "does a part of the work"
[subpods.helper.worker]
system_prompt = "HELPER"
[subpods.helper.tools]
bash = true
`;

/** The call id of the child's bash call, which stays pending (nobody is at a terminal to allow it). */
export const CHILD_BASH_CALL = "toolu_child_bash";

/**
 * Scripts a run of root → helper → helper (a grandchild that answers), after which the child asks
 * to run bash: without an approver its run ends awaiting approval, and the root answers.
 */
export function enqueueDelegation(double: ProviderDouble): void {
  double.enqueue(
    { parts: [{ type: "tool_call", name: "spawn_pod", arguments: { role: "helper", task: "split it" } }] },
    { parts: [{ type: "tool_call", name: "spawn_pod", arguments: { role: "helper", task: "look" } }] },
    { parts: [{ type: "text", text: "the grandchild looked" }] },
    { parts: [{ type: "tool_call", id: CHILD_BASH_CALL, name: "bash", arguments: { command: "ls" } }] },
    { parts: [{ type: "text", text: "the helper waits for an approval" }] },
  );
}
