import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { escalationReason } from "../../src/index.js";
import type { PodTools } from "../helpers.js";
import { LINUX, sandboxPod } from "./support.js";

/** One bash call with a given call id, asking to leave the sandbox; the output as the pod gets it. */
function escalated(tools: PodTools, callId: string, command: string) {
  return tools.callUncapped(
    "bash",
    { command, escalate: { reason: "write the build cache outside the workspace" } },
    callId,
  );
}

function bashDefinition(tools: PodTools) {
  return tools.server.definitions().find((definition) => definition.name === "bash");
}

// Real bubblewrap. A command leaves the sandbox only for a call the pod approved, once, and never
// in a sub-pod. The write target is `outside/`, which the scope does not name: inside the sandbox
// it cannot be written, outside it can.
describe.skipIf(!LINUX)("escalation: running one approved command outside the sandbox", () => {
  it("an approved call runs outside the sandbox and writes outside the scope; positive control: the same call inside the sandbox cannot", async () => {
    const { root, tools } = await sandboxPod();
    const command = `echo escaped > ${root}/outside/kept`;
    const inside = await tools.callUncapped("bash", { command });
    expect(inside.summary).not.toBe("exit code 0");
    expect(await readFile(`${root}/outside/kept`, "utf8")).toBe("outside original\n");

    tools.set.approveEscalation("call-approved");
    const outside = await escalated(tools, "call-approved", command);
    expect(outside.summary).toBe("ran outside the sandbox (escalation approved); exit code 0");
    expect(outside.denied).toBeUndefined();
    expect(await readFile(`${root}/outside/kept`, "utf8")).toBe("escaped\n");
  });

  it("a call that was not approved is refused and does not run; an approval is for one call, used once", async () => {
    const { root, tools } = await sandboxPod();
    const command = `touch ${root}/outside/made`;
    const refused = await escalated(tools, "call-1", command);
    expect(refused.is_error).toBe(true);
    expect(refused.summary).toContain("escalation needs an approval");
    expect(refused.denied).toEqual({
      by: "sandbox",
      rule: "escalation not approved",
      reason: "escalation needs an approval: call call-1 was not approved to run outside the sandbox",
    });
    // Another call's approval does not carry over.
    tools.set.approveEscalation("call-2");
    expect((await escalated(tools, "call-3", command)).denied?.rule).toBe("escalation not approved");
    expect(existsSync(`${root}/outside/made`)).toBe(false);
    // Used once: the approved call runs, the same id again is refused.
    expect((await escalated(tools, "call-2", command)).summary).toContain("exit code 0");
    expect(existsSync(`${root}/outside/made`)).toBe(true);
    expect((await escalated(tools, "call-2", command)).denied?.rule).toBe("escalation not approved");
  });

  it("a sub-pod's sandbox (a loan) refuses escalation even after approveEscalation", async () => {
    const { root, tools } = await sandboxPod({ load: { loaned: true } });
    tools.set.approveEscalation("call-child");
    const refused = await escalated(tools, "call-child", `touch ${root}/outside/made`);
    expect(refused.is_error).toBe(true);
    expect(refused.denied).toMatchObject({ by: "sandbox", rule: "no escalation from a sub-pod's sandbox" });
    expect(existsSync(`${root}/outside/made`)).toBe(false);
    expect(bashDefinition(tools)?.description).toContain("This pod is a sub-pod");
  });

  it("is offered only while the sandbox is active: without it the schema and description stay as they were", async () => {
    const sandboxed = await sandboxPod();
    const withSandbox = bashDefinition(sandboxed.tools);
    expect(JSON.stringify(withSandbox?.inputSchema)).toContain('"escalate"');
    expect(withSandbox?.description).toContain("escalate: { reason }");
    const bare = await sandboxPod({ backend: "none" });
    const without = bashDefinition(bare.tools);
    expect(JSON.stringify(without)).not.toContain("escalate");
    expect(without?.description).toBe(
      "Run a shell command (bash -c) in the workspace directory and return its exit code and output (stdout and stderr interleaved; long output keeps its beginning and end). " +
        "WARNING: this tool is not confined by the file-system scope; it can read and change anything the user can. " +
        "Each call has a timeout (default 120000 ms); the command and everything it started are killed when it expires. Background processes do not survive the call. Secret-looking environment variables are removed.",
    );
    // Without a sandbox the argument does not exist, so a call naming it is invalid.
    const call = await bare.tools.callUncapped("bash", { command: "true", escalate: { reason: "x" } });
    expect(call.summary).toContain("invalid arguments");
  });
});

describe("escalationReason", () => {
  it("reads the reason of a bash call that asks to leave the sandbox, from arguments or their JSON", () => {
    const args = { command: "make", escalate: { reason: "needs the docker socket" } };
    expect(escalationReason("bash", args)).toBe("needs the docker socket");
    expect(escalationReason("bash", JSON.stringify(args))).toBe("needs the docker socket");
    expect(escalationReason("bash", { command: "make" })).toBeUndefined();
    expect(escalationReason("bash", { command: "make", escalate: { reason: "" } })).toBeUndefined();
    expect(escalationReason("bash", "{not json")).toBeUndefined();
    expect(escalationReason("write_file", args)).toBeUndefined();
  });
});
