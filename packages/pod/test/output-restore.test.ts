import { describe, expect, it } from "vitest";
import { FINAL_OUTPUT_DOMAIN } from "../src/index.js";
import { testTools, toolCall, usePodWorlds } from "./pod-harness.js";

// A restored pod exposes the last typed answer of its head segment (docs/output.md, "At every door").

const world = usePodWorlds();

const SCHEMA = {
  type: "object",
  properties: { verdict: { type: "string", enum: ["approve", "reject"] } },
  required: ["verdict"],
};

describe("Pod.restore of a session with typed answers", () => {
  it("exposes the last final_output payload as pod.extensions.get(FINAL_OUTPUT_DOMAIN), and goes on answering", async () => {
    const w = await world({
      manifestExtra: `[output]\nschema = "verdict.schema.json"\n`,
      files: { "project/.podkit/verdict.schema.json": JSON.stringify(SCHEMA) },
      toolPackages: [testTools({ lint: () => "clean" })],
    });
    const pod = await w.pod();
    w.double.enqueue(toolCall("final_answer", { verdict: "approve" }, "call_1"));
    expect((await pod.run("review")).output).toEqual({ verdict: "approve" });
    const sessionId = pod.sessionId as string;
    await pod.close();

    const restored = await w.restore(sessionId);
    expect(restored.extensions.get(FINAL_OUTPUT_DOMAIN)).toMatchObject({
      value: { verdict: "approve" },
      call_id: "call_1",
      schema_digest: expect.stringMatching(/^sha256:/),
    });
    w.double.enqueue(toolCall("final_answer", { verdict: "reject" }, "call_2"));
    expect((await restored.run("again")).output).toEqual({ verdict: "reject" });
    expect(restored.extensions.get(FINAL_OUTPUT_DOMAIN)).toMatchObject({ value: { verdict: "reject" } });
  });
});
