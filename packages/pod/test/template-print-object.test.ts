import { existsSync } from "node:fs";
import { sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { SystemPromptRenderError } from "../src/system-prompt/errors.js";
import { TemplateUnprintableValueError } from "../src/template/errors.js";
import { caught } from "./helpers.js";
import { text, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

// Issue 36 (prompt-acceptance 5 for a printed mapping): `{{ scope }}` in a system prompt used to
// put `[object Object]` into the prompt; now the first run fails and nothing is written.
describe("Pod: a system prompt that prints a mapping", () => {
  it("fails every run with SystemPromptRenderError naming scope, template, line and a hint; no segment, no request", async () => {
    const w = await world({ systemPrompt: "You review changes.\n{{ scope }}" });
    const pod = await w.pod();
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await caught(pod.run("hello"));
      expect(SystemPromptRenderError.isInstance(error), String(error)).toBe(true);
      const cause = (error as SystemPromptRenderError).cause;
      expect(TemplateUnprintableValueError.isInstance(cause)).toBe(true);
      expect(cause).toMatchObject({ variable: "scope", template: "[worker].system_prompt", line: 2 });
      expect(error.message).toContain("cannot print 'scope' (a mapping) in [worker].system_prompt, line 2");
      expect((error as SystemPromptRenderError).hint).toContain("`scope.summary`");
      expect(error.message).not.toContain("[object Object]");
    }
    expect(pod.systemPrompt).toBeUndefined();
    expect(existsSync(sessionsRoot(w.workspace))).toBe(false);
    expect(w.double.requests).toHaveLength(0);
  });

  it("renders when the template prints a field instead (the sub-pod docs' example)", async () => {
    const w = await world({
      systemPrompt: 'You review changes.\n{{ scope.summary }}\n{{ tools | join(", ") }}',
    });
    const pod = await w.pod();
    w.double.enqueue(text("hi"));
    await pod.run("hello");
    expect(pod.systemPrompt).toContain(`You review changes.\n${w.loaded.scope.summary}`);
    expect(pod.systemPrompt).not.toContain("[object Object]");
  });
});
